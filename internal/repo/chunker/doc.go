// Package chunker splits a byte stream into content-defined chunks with
// FastCDC (Xia et al., "FastCDC: a Fast and Efficient Content-Defined
// Chunking Approach", USENIX ATC 2016), using normalized chunking at level 2
// and a gear table derived from a per-repository secret key, so that chunk
// boundaries do not reveal (fingerprint) the content.
//
// # Repository format
//
// The boundaries are part of the repository format: changing anything below
// changes every chunk and defeats deduplication against older snapshots.
//
// Gear table: entry i (0 <= i < 256) is the big-endian uint64 formed by the
// first 8 bytes of HMAC-SHA256(key, "cloudstic gear" || byte(i)), where
// "cloudstic gear" is the 14 ASCII bytes of that string and byte(i) is one
// byte. See NewGear.
//
// Cut point of data (the length of the first chunk, see Cut), with
// parameters Min, Avg, Max and b = log2(Avg):
//
//   - if len(data) <= Min, the whole of data is one chunk;
//   - n = min(len(data), Max); normal = min(Avg, n);
//   - the fingerprint fp (uint64, wrapping) starts at 0 and, for each byte
//     data[i] with i = Min, Min+1, ..., is updated as fp = fp<<1 + gear[data[i]];
//   - for i < normal the chunk ends after byte i (length i+1) when
//     fp & mask(b+2) == 0; for normal <= i < n when fp & mask(b-2) == 0;
//   - if no byte qualifies the chunk is n bytes long;
//   - mask(k) has k one bits at bit positions 63-k through 62 (bit 63, the
//     top bit, is never used), so the fingerprint's effective window is the
//     last 63 bytes.
//
// The stream is cut by applying the rule above to the unread remainder of
// the stream, repeatedly. An empty stream has no chunks.
package chunker
