package fsmeta

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/cloudstic/cloudstic/internal/repo/tree"
	"github.com/cloudstic/cloudstic/internal/source/local"
)

// setDACL gives the entry at path the DACL of sddl (protected or not, as
// it says), through Windows's own call rather than the Writer's.
func setDACL(t *testing.T, path, sddl string) {
	t.Helper()
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	ctl, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	info := windows.SECURITY_INFORMATION(windows.DACL_SECURITY_INFORMATION | windows.UNPROTECTED_DACL_SECURITY_INFORMATION)
	if ctl&windows.SE_DACL_PROTECTED != 0 {
		info = windows.DACL_SECURITY_INFORMATION | windows.PROTECTED_DACL_SECURITY_INFORMATION
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, info, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
}

// daclSection is the D: section of an SDDL string (up to an S: section).
func daclSection(sddl string) string {
	i := strings.Index(sddl, "D:")
	if i < 0 {
		return ""
	}
	d := sddl[i:]
	if j := strings.Index(d, ")S:"); j >= 0 {
		d = d[:j+1]
	}
	return d
}

// keepsDACLs says whether the file system keeps a DACL as given. Wine 8
// does not: it stores none, and makes one up from the Unix mode bits, to
// which it maps the DACL it is given.
func keepsDACLs(t *testing.T) bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const dacl = "D:P(A;;FA;;;WD)"
	setDACL(t, path, dacl)
	sddl, err := readSDDL(path, false)
	if err != nil {
		t.Fatal(err)
	}
	return daclSection(sddl) == dacl
}

// captureSD captures the entry at path with a fresh Capturer.
func captureSD(t *testing.T, path string) tree.Node {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCapturer(local.New())
	c.Warnf = func(format string, args ...any) { t.Errorf("capture warned: "+format, args...) }
	n, err := c.Node(context.Background(), path, fi)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSecurityDescriptorRoundTrip: capture → restore → capture gives the
// security descriptor captured first, for files, directories and the
// output directory itself. Where the file system keeps DACLs (Windows),
// the captured DACL is also exactly the one set.
func TestSecurityDescriptorRoundTrip(t *testing.T) {
	kept := keepsDACLs(t)
	if !kept {
		t.Log("this file system does not keep DACLs as given (Wine 8 maps them to Unix modes): checking the round trip only")
	}
	tests := []struct {
		name string
		typ  tree.Type
		root bool // restored as the output directory (ApplyRootMeta)
		dacl string
		// owners: the restore asks for owners too (WriterOptions.Owners),
		// which it sets where it holds SeRestorePrivilege (Wine's
		// process does).
		owners bool
	}{
		{"file everyone full", tree.TypeFile, false, "D:P(A;;FA;;;WD)", false},
		{"file everyone full owners", tree.TypeFile, false, "D:P(A;;FA;;;WD)", true},
		{"file read only", tree.TypeFile, false, "D:P(A;;FA;;;SY)(A;;FR;;;WD)", false},
		{"file no everyone", tree.TypeFile, false, "D:P(A;;FA;;;SY)(A;;FA;;;BA)", false},
		{"file unprotected", tree.TypeFile, false, "D:(A;;FA;;;WD)", false},
		{"dir everyone full", tree.TypeDir, false, "D:P(A;OICI;FA;;;WD)", false},
		{"dir everyone full owners", tree.TypeDir, false, "D:P(A;OICI;FA;;;WD)", true},
		{"dir system only", tree.TypeDir, false, "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)", false},
		{"root everyone full", tree.TypeDir, true, "D:P(A;OICI;FA;;;WD)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "e")
			var err error
			if tt.typ == tree.TypeDir {
				err = os.Mkdir(src, 0o755)
			} else {
				err = os.WriteFile(src, []byte("x"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			fresh := captureSD(t, src)
			setDACL(t, src, tt.dacl)
			n := captureSD(t, src)
			switch {
			case n.SDDL == "":
				t.Fatal("no security descriptor captured")
			case n.SDDL == fresh.SDDL && !kept:
				t.Skipf("setting %s shows no change here (%q): a restore that did nothing would pass", tt.dacl, n.SDDL)
			case n.SDDL == fresh.SDDL:
				t.Fatalf("setting %s changed nothing: %q", tt.dacl, n.SDDL)
			}
			if kept && daclSection(n.SDDL) != tt.dacl {
				t.Errorf("captured DACL %q, want %q", daclSection(n.SDDL), tt.dacl)
			}
			got := restoreSD(t, tt.root, tt.owners, &n)
			if got.SDDL != n.SDDL {
				t.Errorf("restored %q, want %q", got.SDDL, n.SDDL)
			}
		})
	}
}

// restoreSD restores n with a Writer (as the output directory itself
// with root) and captures what it made. The Writer must warn of nothing.
func restoreSD(t *testing.T, root, owners bool, n *tree.Node) tree.Node {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	w, err := NewWriter(out, WriterOptions{Owners: owners, Logf: func(format string, args ...any) {
		t.Errorf("restore warned: "+format, args...)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close() //nolint:errcheck // test cleanup.
	path := filepath.Join(out, "e")
	switch {
	case root:
		path = out
		err = w.ApplyRootMeta(n)
	case n.Type == tree.TypeDir:
		if err = w.Mkdir("e", n); err == nil {
			err = w.ApplyMeta("e", n)
		}
	default:
		var f *os.File
		if f, err = w.CreateFile("e", n); err == nil {
			err = w.ApplyMetaFile(f, "e", n)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return captureSD(t, path)
}

// TestSecurityDescriptorNotRestored: an SDDL Windows refuses, or one the
// entry cannot take, is a warning and never fails the restore.
func TestSecurityDescriptorNotRestored(t *testing.T) {
	tests := []struct {
		name, sddl string
	}{
		{"not SDDL", "not an SDDL"},
		{"unknown SID alias", "D:P(A;;FA;;;QQ)"},
		{"broken ACE", "D:P(A;;FA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var warnings []string
			w, err := NewWriter(t.TempDir(), WriterOptions{Logf: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				warnings = append(warnings, fmt.Sprintf(format, args...))
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() //nolint:errcheck // test cleanup.
			n := tree.Node{Name: "e", Type: tree.TypeDir, Mode: 0o755, SDDL: tt.sddl}
			if err := w.Mkdir("e", &n); err != nil {
				t.Fatal(err)
			}
			if err := w.ApplyMeta("e", &n); err != nil {
				t.Fatalf("ApplyMeta: %v, want a warning only", err)
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "security descriptor not restored") {
				t.Errorf("warnings %q, want one of the security descriptor", warnings)
			}
		})
	}
}

// TestSecurityDescriptorSkipMode: SkipMode records no security
// descriptor; by default one is recorded, with an owner and a DACL.
func TestSecurityDescriptorSkipMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprint("skip=", skip), func(t *testing.T) {
			c := NewCapturer(local.New())
			c.SkipMode = skip
			n, err := c.Node(context.Background(), path, fi)
			if err != nil {
				t.Fatal(err)
			}
			if want := sdOwner | sdGroup | sdDACL; skip && n.SDDL != "" || !skip && sddlParts(n.SDDL)&want != want {
				t.Errorf("SDDL %q", n.SDDL)
			}
		})
	}
}

// TestSecurityDescriptorUnreadable: an entry whose descriptor cannot be
// read (here: gone between its lstat and the read) is captured without
// one, and only the first such entry is warned of.
func TestSecurityDescriptorUnreadable(t *testing.T) {
	dir := t.TempDir()
	c := NewCapturer(local.New())
	var warnings []string
	c.Warnf = func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	for _, name := range []string{"a", "b"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		n, err := c.Node(context.Background(), path, fi)
		if err != nil {
			t.Fatalf("%s: %v, want the entry without a descriptor", name, err)
		}
		if n.SDDL != "" {
			t.Errorf("%s: SDDL %q, want none", name, n.SDDL)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "security descriptor not read") {
		t.Errorf("warnings %q, want one", warnings)
	}
}
