// Package onedrive is the source of a OneDrive folder (a user's own
// drive, or another drive of theirs named by its name), read through
// Microsoft Graph v1.0 over an OAuth client of golang.org/x/oauth2 (see
// package cloud for the tree, downloads and retries it shares with
// Google Drive). The Graph base URL is configurable: national clouds
// (graph.microsoft.us, microsoftgraph.chinacloudapi.cn), a proxy, a test
// server.
//
// What it records of each item: its id, the best checksum Graph gives
// (sha256Hash, else sha1Hash, else quickXorHash, the only one of
// OneDrive for Business), size and the file system modification time
// the client uploaded. OneNote notebooks (packages) and items shared from
// other drives (remote items) are left out.
//
// Listings use Graph's delta query of the drive's root: its first pass
// lists every item, and ends with the delta link that onedrive-changes
// keeps in the snapshot to read only the changes next time. A delta link
// or next link that does not point at the configured Graph URL is never
// followed (the access token would go with it).
package onedrive
