//go:build unix

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// treeOpts choose what makeTree builds.
type treeOpts struct {
	big  bool   // add the 5 MiB and 20 MiB files
	seed uint64 // content seed: different seeds give different trees
}

// treeInfo says what the file system under the tree allowed.
type treeInfo struct {
	xattrs bool // user.* extended attributes were set
	owners bool // some entries belong to another uid/gid (running as root)
}

const (
	testUID = 1234
	testGID = 5678
)

// randomBytes returns n bytes from a generator seeded with seed.
func randomBytes(seed uint64, n int) []byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b) // ChaCha8.Read never fails
	return b
}

// compressible returns n bytes of repetitive text.
func compressible(seed uint64, n int) []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < n; i++ {
		fmt.Fprintf(&buf, "line %d of a very compressible file, seed %d, %s\n", i, seed, strings.Repeat("abc", i%7))
	}
	return buf.Bytes()[:n]
}

// treeBuilder creates entries below root, failing the test on any error.
type treeBuilder struct {
	t    *testing.T
	root string
}

func (b treeBuilder) p(rel string) string { return filepath.Join(b.root, rel) }

func (b treeBuilder) check(err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b treeBuilder) dir(rel string, mode os.FileMode) {
	b.t.Helper()
	b.check(os.MkdirAll(b.p(rel), 0o755))
	b.check(os.Chmod(b.p(rel), mode))
}

func (b treeBuilder) file(rel string, data []byte, mode os.FileMode) {
	b.t.Helper()
	b.check(os.MkdirAll(filepath.Dir(b.p(rel)), 0o755))
	b.check(os.WriteFile(b.p(rel), data, 0o600))
	b.check(os.Chmod(b.p(rel), mode))
}

func (b treeBuilder) symlink(target, rel string) {
	b.t.Helper()
	b.check(os.Symlink(target, b.p(rel)))
}

func (b treeBuilder) link(oldRel, newRel string) {
	b.t.Helper()
	b.check(os.Link(b.p(oldRel), b.p(newRel)))
}

// makeTree builds a source tree with every kind of entry the tool claims
// to back up, and returns what the file system allowed.
func makeTree(t *testing.T, root string, o treeOpts) treeInfo {
	t.Helper()
	b := treeBuilder{t, root}
	b.dir(".", 0o755)
	seed := o.seed
	b.file("empty", nil, 0o644)
	b.file("one", []byte{byte(seed)}, 0o644)
	b.file("f4095", randomBytes(seed+1, 4095), 0o644)
	b.file("f4096", randomBytes(seed+2, 4096), 0o640)
	b.file("comp64k", compressible(seed, 64<<10), 0o644)
	if o.big {
		b.file("big/rand5m", randomBytes(seed+3, 5<<20), 0o644)
		b.file("big/comp5m", compressible(seed+3, 5<<20), 0o644)
		b.file("big/rand20m", randomBytes(seed+4, 20<<20), 0o644)
		b.file("big/comp20m", compressible(seed+4, 20<<20), 0o644)
	}
	b.file("a/b/c/d/deep.txt", []byte(fmt.Sprintf("deep %d\n", seed)), 0o644)
	b.file("a/b/sibling", randomBytes(seed+5, 100), 0o644)
	b.dir("emptydir", 0o755)
	b.dir("dirs/e1/e2", 0o755)
	b.dir("private", 0o700)
	b.file("private/secret", []byte("secret\n"), 0o600)
	b.file("bin/run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	b.dir("sgid", 0o2775)
	b.file("sgid/inner", []byte("inner\n"), 0o664)
	b.symlink("a/b/c/d/deep.txt", "link-rel")
	b.symlink("/nonexistent/cloudstic-e2e/target", "link-abs")
	b.symlink("no/such/file", "link-dangling")
	b.symlink("a/b", "link-dir")
	b.file("hard1", []byte(fmt.Sprintf("hard link %d\n", seed)), 0o644)
	b.link("hard1", "a/hard2")
	b.file("h3a", randomBytes(seed+6, 5000), 0o600)
	b.link("h3a", "h3b")
	b.link("h3a", "a/b/h3c")
	b.check(unix.Mkfifo(b.p("fifo"), 0o640))
	b.check(os.Chmod(b.p("fifo"), 0o640))
	b.file("bad-\xff\xfe-name", []byte("not utf-8\n"), 0o644)
	b.file("with space.txt", []byte("space\n"), 0o644)
	b.file("new\nline.txt", []byte("newline\n"), 0o644)
	b.file("dir with space/inner file", []byte("inner\n"), 0o644)
	var info treeInfo
	b.file("xattr-file", []byte("xattrs\n"), 0o644)
	info.xattrs = setXattrs(t, b.p("xattr-file"), b.p("a"))
	if os.Geteuid() == 0 {
		b.file("owned", []byte("owned\n"), 0o644)
		b.dir("owned-dir", 0o750)
		b.check(os.Lchown(b.p("owned"), testUID, testGID))
		b.check(os.Lchown(b.p("owned-dir"), testUID, testGID))
		b.check(os.Lchown(b.p("link-rel"), testUID, testGID))
		info.owners = true
	}
	setTimes(t, root, seed)
	return info
}

// setXattrs sets user.* attributes on a file and a directory; false if the
// file system refuses them.
func setXattrs(t *testing.T, file, dir string) bool {
	t.Helper()
	err := unix.Setxattr(file, "user.cloudstic", []byte("value\x00with nul"), 0)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Logf("file system refuses user xattrs (%v): xattr rows skipped", err)
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct{ p, name, val string }{
		{file, "user.empty", ""},
		{dir, "user.dir", "on a directory"},
	} {
		if err := unix.Setxattr(x.p, x.name, []byte(x.val), 0); err != nil {
			t.Fatal(err)
		}
	}
	return true
}

// setTimes gives every entry below root (deepest first, symlinks
// themselves) a distinct mtime in the past with nanoseconds.
func setTimes(t *testing.T, root string, seed uint64) {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC).Add(time.Duration(seed) * time.Hour)
	for i := len(paths) - 1; i >= 0; i-- {
		mt := base.Add(time.Duration(i)*time.Minute + time.Duration(123456789+i))
		ts := []unix.Timespec{unix.NsecToTimespec(mt.UnixNano()), unix.NsecToTimespec(mt.UnixNano())}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, paths[i], ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			t.Fatalf("utimensat %s: %v", paths[i], err)
		}
	}
}

// entryInfo is what the comparison looks at for one entry.
type entryInfo struct {
	rel  string
	st   unix.Stat_t
	link string
}

func (e entryInfo) typ() uint32 { return uint32(e.st.Mode) & unix.S_IFMT } //nolint:unconvert // Mode is a uint16 on the BSDs

// scanTree lstats every entry below root (root excluded), by relative
// path.
func scanTree(t *testing.T, root string) map[string]entryInfo {
	t.Helper()
	out := map[string]entryInfo{}
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		e := entryInfo{rel: rel}
		if err := unix.Lstat(p, &e.st); err != nil {
			return err
		}
		if e.typ() == unix.S_IFLNK {
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatalf("scanning %s: %v", root, err)
	}
	return out
}

// userXattrs returns the user.* attributes of p.
func userXattrs(t *testing.T, p string) map[string]string {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		t.Fatalf("llistxattr %s: %v", p, err)
	}
	out := map[string]string{}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		val := make([]byte, 64<<10)
		m, err := unix.Lgetxattr(p, name, val)
		if err != nil {
			t.Fatalf("lgetxattr %s %s: %v", p, name, err)
		}
		out[name] = string(val[:m])
	}
	return out
}

// cmpOpts choose what compareTrees checks beyond type, content, mode,
// mtime and symlink targets.
type cmpOpts struct {
	xattrs, owners bool
}

// compareTrees checks that dst holds exactly the entries of src with the
// same type, content, permission bits, mtime (ns), symlink target,
// hard-link identity and, as asked, xattrs and owners.
func compareTrees(t *testing.T, src, dst string, o cmpOpts) {
	t.Helper()
	want, got := scanTree(t, src), scanTree(t, dst)
	for _, rel := range sortedKeys(got) {
		if _, ok := want[rel]; !ok {
			t.Errorf("%q: restored but not in the source", rel)
		}
	}
	srcGroups := map[[2]uint64]string{} // source inode → first name
	for _, rel := range sortedKeys(want) {
		w := want[rel]
		g, ok := got[rel]
		if !ok {
			t.Errorf("%q: missing from the restore", rel)
			continue
		}
		compareEntry(t, src, dst, w, g, o)
		if w.typ() != unix.S_IFDIR && w.st.Nlink > 1 {
			k := [2]uint64{uint64(w.st.Dev), w.st.Ino} //nolint:gosec,unconvert // Dev is an int32 on macOS
			first, seen := srcGroups[k]
			if !seen {
				srcGroups[k] = rel
				continue
			}
			if f := got[first]; f.st.Ino != g.st.Ino {
				t.Errorf("%q and %q: hard links in the source, separate files in the restore", first, rel)
			}
		}
	}
	// Entries that were separate in the source stay separate.
	dstOwner := map[uint64]string{}
	for _, rel := range sortedKeys(got) {
		g, w := got[rel], want[rel]
		if g.typ() == unix.S_IFDIR {
			continue
		}
		if other, ok := dstOwner[g.st.Ino]; ok && (want[other].st.Ino != w.st.Ino) {
			t.Errorf("%q and %q: separate in the source, one inode in the restore", other, rel)
		}
		dstOwner[g.st.Ino] = rel
	}
}

func compareEntry(t *testing.T, src, dst string, w, g entryInfo, o cmpOpts) {
	t.Helper()
	rel := w.rel
	if w.typ() != g.typ() {
		t.Errorf("%q: type %o, want %o", rel, g.typ(), w.typ())
		return
	}
	if w.typ() != unix.S_IFLNK && w.st.Mode&0o7777 != g.st.Mode&0o7777 {
		t.Errorf("%q: mode %04o, want %04o", rel, g.st.Mode&0o7777, w.st.Mode&0o7777)
	}
	if w.st.Mtim != g.st.Mtim {
		t.Errorf("%q: mtime %v, want %v", rel, time.Unix(g.st.Mtim.Unix()).UTC(), time.Unix(w.st.Mtim.Unix()).UTC())
	}
	if w.link != g.link {
		t.Errorf("%q: symlink target %q, want %q", rel, g.link, w.link)
	}
	if o.owners && (w.st.Uid != g.st.Uid || w.st.Gid != g.st.Gid) {
		t.Errorf("%q: owner %d:%d, want %d:%d", rel, g.st.Uid, g.st.Gid, w.st.Uid, w.st.Gid)
	}
	if w.typ() == unix.S_IFREG {
		compareContent(t, rel, filepath.Join(src, rel), filepath.Join(dst, rel))
	}
	if o.xattrs && w.typ() != unix.S_IFLNK {
		wx, gx := userXattrs(t, filepath.Join(src, rel)), userXattrs(t, filepath.Join(dst, rel))
		if fmt.Sprint(wx) != fmt.Sprint(gx) {
			t.Errorf("%q: xattrs %q, want %q", rel, gx, wx)
		}
	}
}

func compareContent(t *testing.T, rel, a, b string) {
	t.Helper()
	wd, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	gd, err := os.ReadFile(b)
	if err != nil {
		t.Errorf("%q: %v", rel, err)
		return
	}
	if !bytes.Equal(wd, gd) {
		t.Errorf("%q: content differs (%d bytes restored, want %d)", rel, len(gd), len(wd))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
