package s3

import (
	"context"
	"testing"

	"github.com/cloudstic/cloudstic/internal/store"
	"github.com/cloudstic/cloudstic/internal/store/wrap"
)

// TestDeleteIfPresentRequests: Delete asks HeadObject first (to report a
// missing key); DeleteIfPresent, and store.DeleteAbsentOK through the
// logging wrapper, send the DeleteObject alone.
func TestDeleteIfPresentRequests(t *testing.T) {
	eachServer(t, func(t *testing.T, e testEnv) {
		ctx := context.Background()
		s := openTest(t, e.config(t, FlavorS3))
		cases := []struct {
			name string
			del  func(key string) error
			want int64
		}{
			{"Delete", func(k string) error { return s.Delete(ctx, k) }, 2},
			{"DeleteIfPresent", func(k string) error { return s.DeleteIfPresent(ctx, k) }, 1},
			{"DeleteAbsentOKThroughLogging", func(k string) error {
				return store.DeleteAbsentOK(ctx, wrap.NewLogging(s, nil), k)
			}, 1},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if _, err := s.Put(ctx, "d/"+c.name, []byte("x"), store.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				before, _, _ := s.Stats()
				if err := c.del("d/" + c.name); err != nil {
					t.Fatal(err)
				}
				after, _, _ := s.Stats()
				if after-before != c.want {
					t.Errorf("%d requests, want %d", after-before, c.want)
				}
				if _, err := s.Stat(ctx, "d/"+c.name); err == nil {
					t.Error("the key is still there")
				}
			})
		}
	})
}
