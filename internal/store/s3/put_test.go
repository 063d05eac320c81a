package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudstic/cloudstic/internal/store"
)

func TestMultipart(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		s := openTest(t, e.config(t, FlavorS3))
		// Lower the threshold so a 12 MiB object goes in three parts (S3's
		// minimum part size is 5 MiB).
		s.multipartThreshold = 8 << 20
		s.partSize = 5 << 20
		ctx := context.Background()
		data := make([]byte, 12<<20+3)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		const key = "data/mp/big"
		var cur store.ObjectInfo
		steps := []struct {
			name    string
			opts    func() store.PutOptions
			wantErr error
		}{
			{"CreateIfAbsent", func() store.PutOptions { return store.PutOptions{IfAbsent: true} }, nil},
			{"CreateExisting", func() store.PutOptions { return store.PutOptions{IfAbsent: true} }, store.ErrExists},
			{"SwapCurrent", func() store.PutOptions { return store.PutOptions{IfVersion: cur.Version} }, nil},
			{"SwapStale", func() store.PutOptions { return store.PutOptions{IfVersion: `"stale-etag"`} }, store.ErrVersionMismatch},
			{"Plain", func() store.PutOptions { return store.PutOptions{} }, nil},
		}
		for i, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				data[0] = byte(i) // each write differs
				info, err := s.Put(ctx, key, data, st.opts())
				if st.wantErr != nil {
					if !errors.Is(err, st.wantErr) {
						t.Fatalf("Put = %v, want %v", err, st.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if info.Version == "" || info.Version == cur.Version || info.Size != int64(len(data)) {
					t.Fatalf("Put info %+v (previous version %q)", info, cur.Version)
				}
				if !strings.HasSuffix(info.Version, `-3"`) {
					t.Errorf("Version %q is not a 3-part multipart ETag", info.Version)
				}
				cur = info
				got, err := s.Get(ctx, key, 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("Get returned %d bytes differing from the %d put", len(got), len(data))
				}
				stat, err := s.Stat(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if stat.Version != info.Version {
					t.Fatalf("Stat version %q != Put version %q", stat.Version, info.Version)
				}
			})
		}
	})
}

func TestPutInfo(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		s := openTest(t, e.config(t, FlavorS3))
		ctx := context.Background()
		info, err := s.Put(ctx, "index/lock.exclusive", []byte("lock"), store.PutOptions{IfAbsent: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(info.Version, `"`) || !strings.HasSuffix(info.Version, `"`) {
			t.Errorf("Version %q is not the quoted ETag", info.Version)
		}
		st, err := s.Stat(ctx, "index/lock.exclusive")
		if err != nil {
			t.Fatal(err)
		}
		// Put's ModTime is the response's Date header and Stat's is
		// LastModified: both come from the server's clock, in whole seconds.
		if info.ModTime.IsZero() {
			t.Fatal("Put returned no ModTime")
		}
		if d := info.ModTime.Sub(st.ModTime).Abs(); d > 2*time.Second {
			t.Errorf("Put ModTime %v and LastModified %v differ by %v", info.ModTime, st.ModTime, d)
		}
	})
}

func TestStatsAndLog(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		cfg := e.config(t, FlavorS3)
		var mu sync.Mutex
		var lines []string
		cfg.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		}
		s := openTest(t, cfg)
		req0, up0, down0 := s.Stats()
		ctx := context.Background()
		payload := bytes.Repeat([]byte("x"), 1000)
		if _, err := s.Put(ctx, "k/one", payload, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "k/one", 1<<30); err != nil {
			t.Fatal(err)
		}
		req, up, down := s.Stats()
		if req-req0 != 2 || up-up0 < 1000 || down-down0 < 1000 {
			t.Fatalf("Stats went from (%d, %d, %d) to (%d, %d, %d); want 2 more requests and >= 1000 bytes each way",
				req0, up0, down0, req, up, down)
		}
		mu.Lock()
		defer mu.Unlock()
		// One line per request, besides the one saying what the store declares.
		var requestLines []string
		for _, l := range lines {
			if !strings.Contains(l, "declares create-if-absent") {
				requestLines = append(requestLines, l)
			}
		}
		if int64(len(requestLines)) != req || len(requestLines) != len(lines)-1 {
			t.Fatalf("%d log lines (%d of requests) for %d requests", len(lines), len(requestLines), req)
		}
		if last := lines[len(lines)-1]; !strings.Contains(last, "GetObject") || !strings.Contains(last, "k/one") {
			t.Errorf("last log line %q does not name the GetObject of k/one", last)
		}
	})
}

func TestMaxConnections(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		cfg := e.config(t, FlavorS3)
		cfg.MaxConnections = 2
		s := openTest(t, cfg)
		if cap(s.sem) != 2 || s.transport.MaxConnsPerHost != 2 {
			t.Fatalf("semaphore %d, MaxConnsPerHost %d; want 2 and 2", cap(s.sem), s.transport.MaxConnsPerHost)
		}
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.Put(ctx, fmt.Sprintf("c/%d", i), []byte("x"), store.PutOptions{})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}
	})
}
