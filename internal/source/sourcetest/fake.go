package sourcetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/source"
	"github.com/cloudstic/cloudstic/test/fakecloud"
)

// FakeDrive is a DriveTree on the fake cloud server (test/fakecloud):
// every Open is a new folder below the tenant's root.
type FakeDrive struct {
	C *fakecloud.Client
	// NewSource opens the source under test on the fake.
	NewSource func(t *testing.T, c *fakecloud.Client) source.Source
	parent    string
	ids       map[string]string // by relative path
	n         int
}

// NewTenant creates a tenant of its own for the test on the fake that
// scripts/cloud-server.sh runs (CLOUDSTIC_TEST_FAKECLOUD).
func NewTenant(t *testing.T) *fakecloud.Client {
	t.Helper()
	url := os.Getenv("CLOUDSTIC_TEST_FAKECLOUD")
	if url == "" {
		t.Fatal(`CLOUDSTIC_TEST_FAKECLOUD not set: start the fake with eval "$(scripts/cloud-server.sh)"`)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails
	name := strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
	c, err := fakecloud.NewTenant(context.Background(), url, fmt.Sprintf("%.30s-%x", name, b))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Open makes a new root folder and a source.
func (f *FakeDrive) Open(t *testing.T) (source.Source, string) {
	f.n++
	name := fmt.Sprintf("run-%d", f.n)
	it, err := f.C.Put(context.Background(), fakecloud.Item{Name: name, Dir: true, Parent: f.C.Tenant.RootID})
	if err != nil {
		t.Fatal(err)
	}
	f.parent, f.ids = it.ID, map[string]string{"": it.ID}
	return f.NewSource(t, f.C), "/" + name
}

func (f *FakeDrive) dirID(t *testing.T, rel string) string {
	if rel == "." {
		rel = ""
	}
	id, ok := f.ids[rel]
	if !ok {
		t.Fatalf("no folder %q", rel)
	}
	return id
}

// MkdirAll creates the folders of rel.
func (f *FakeDrive) MkdirAll(t *testing.T, rel string) {
	cur := ""
	for _, part := range strings.Split(rel, "/") {
		next := path.Join(cur, part)
		if _, ok := f.ids[next]; !ok {
			it, err := f.C.Put(context.Background(), fakecloud.Item{Name: part, Dir: true, Parent: f.dirID(t, cur)})
			if err != nil {
				t.Fatal(err)
			}
			f.ids[next] = it.ID
		}
		cur = next
	}
}

// Write creates or replaces the file rel.
func (f *FakeDrive) Write(t *testing.T, rel string, data []byte) {
	if id, ok := f.ids[rel]; ok {
		if err := f.C.Patch(context.Background(), id, map[string]any{"data": data}); err != nil {
			t.Fatal(err)
		}
		return
	}
	it, err := f.C.Put(context.Background(), fakecloud.Item{Name: path.Base(rel), Parent: f.dirID(t, path.Dir(rel)), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	f.ids[rel] = it.ID
}

// Duplicate adds another file of rel's name to its folder.
func (f *FakeDrive) Duplicate(t *testing.T, rel string, data []byte) {
	if _, err := f.C.Put(context.Background(), fakecloud.Item{Name: path.Base(rel), Parent: f.dirID(t, path.Dir(rel)), Data: data}); err != nil {
		t.Fatal(err)
	}
}

// Rename renames or moves an item.
func (f *FakeDrive) Rename(t *testing.T, from, to string) {
	id := f.ids[from]
	if err := f.C.Patch(context.Background(), id, map[string]any{"name": path.Base(to), "parent": f.dirID(t, path.Dir(to))}); err != nil {
		t.Fatal(err)
	}
	for p, pid := range f.ids {
		if p == from || strings.HasPrefix(p, from+"/") {
			delete(f.ids, p)
			f.ids[to+strings.TrimPrefix(p, from)] = pid
		}
	}
}

// Remove deletes an item.
func (f *FakeDrive) Remove(t *testing.T, rel string) {
	if err := f.C.Delete(context.Background(), f.ids[rel]); err != nil {
		t.Fatal(err)
	}
	delete(f.ids, rel)
}

// Unreadable makes the file's downloads answer 403.
func (f *FakeDrive) Unreadable(t *testing.T, rel string) bool {
	if err := f.C.Patch(context.Background(), f.ids[rel], map[string]any{"no_download": true}); err != nil {
		t.Fatal(err)
	}
	return true
}

// ExpireTokens makes the change tokens issued so far expire.
func (f *FakeDrive) ExpireTokens(t *testing.T) {
	if err := f.C.ExpireTokens(context.Background()); err != nil {
		t.Fatal(err)
	}
}
