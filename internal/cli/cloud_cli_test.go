package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCloudURI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		uri                         string
		ok, bad                     bool
		typ, provider, drive, fpath string
	}{
		{uri: "gdrive", ok: true, typ: "gdrive", provider: "google", fpath: "/"}, // recorded as gdrive:/
		{uri: "gdrive:/", ok: true, typ: "gdrive", provider: "google", fpath: "/"},
		{uri: "gdrive-changes:/Team Folder/sub/", ok: true, typ: "gdrive-changes", provider: "google", fpath: "/Team Folder/sub"},
		{uri: "gdrive://Company Data", ok: true, typ: "gdrive", provider: "google", drive: "Company Data", fpath: "/"},
		{uri: "gdrive://Company Data/path/to/folder", ok: true, typ: "gdrive", provider: "google", drive: "Company Data", fpath: "/path/to/folder"},
		{uri: "onedrive", ok: true, typ: "onedrive", provider: "onedrive", fpath: "/"},
		{uri: "onedrive-changes:/Documents", ok: true, typ: "onedrive-changes", provider: "onedrive", fpath: "/Documents"},
		{uri: "onedrive://Work Drive/x", ok: true, typ: "onedrive", provider: "onedrive", drive: "Work Drive", fpath: "/x"},
		{uri: "gdrive://", ok: true, bad: true},
		{uri: "onedrive-changes:///x", ok: true, bad: true},
		{uri: "local:/srv"},
		{uri: "sftp://host/path"},
		{uri: "gdrivex"},
	} {
		t.Run(c.uri, func(t *testing.T) {
			u, ok, err := parseCloudURI(c.uri)
			if ok != c.ok || (err != nil) != c.bad {
				t.Fatalf("ok %v, err %v; want ok %v, an error %v", ok, err, c.ok, c.bad)
			}
			if c.bad || !c.ok {
				return
			}
			if u.typ != c.typ || u.provider != c.provider || u.drive != c.drive || u.path != c.fpath {
				t.Errorf("got %+v, want type %s provider %s drive %q path %q", u, c.typ, c.provider, c.drive, c.fpath)
			}
			if again, ok, err := parseCloudURI(u.String()); !ok || err != nil || again != u {
				t.Errorf("%q parses to %+v (%v, %v), not %+v", u.String(), again, ok, err, u)
			}
		})
	}
}

// cloudRun runs the CLI in-process with a config directory of its own
// and a local store in dir.
func cloudRun(t *testing.T, cfg string, args ...string) uxResult {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"CLOUDSTIC_CONFIG_DIR": cfg, "CLOUDSTIC_PASSWORD": "pw"}
	code := Main(context.Background(), append(args, "-store", "local:"+filepath.Join(cfg, "store")),
		IO{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
	return uxResult{out.String(), errb.String(), code}
}

// TestCloudUsageErrors: what a cloud source cannot be combined with, and
// auth entries that do not fit, are usage errors naming the problem,
// before anything is opened.
func TestCloudUsageErrors(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	if r := cloudRun(t, cfg, "auth", "new", "-name", "ms", "-provider", "onedrive", "-onedrive-client-id", "id"); r.code != ExitOK {
		t.Fatalf("auth new: %+v", r)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "-source", "gdrive", "-source", "local:/srv"}, "backed up alone"},
		{[]string{"backup", "-source", "local:/srv", "-auth-ref", "ms"}, "-auth-ref applies to gdrive and onedrive sources only"},
		{[]string{"backup", "-source", "onedrive", "-volume-uuid", "956bed6d-2f80-40e0-95e2-f5e3e5bb6f4f"}, "-volume-uuid applies to local sources only"},
		{[]string{"backup", "-source", "gdrive://"}, "DRIVE NAME"},
		{[]string{"backup", "-source", "gdrive", "-auth-ref", "ms"}, `auth entry "ms" is for onedrive, not google`},
		{[]string{"auth", "new", "-name", "x", "-provider", "dropbox"}, `-provider "dropbox"`},
		{[]string{"auth", "new", "-name", "x", "-provider", "google", "-google-token-ref", "nope://x"}, "nope"},
		{[]string{"auth", "login", "-name", "a", "b"}, "usage"},
		{[]string{"profile", "new", "-name", "p", "-source", "gdrive", "-auth-ref", "missing"}, `auth entry "missing" is not in`},
		{[]string{"profile", "new", "-name", "p", "-source", "gdrive-changes:/Work", "-auth-ref", "ms"}, `auth entry "ms" is for onedrive`},
		{[]string{"profile", "new", "-name", "p", "-source", "local:/srv", "-auth-ref", "ms"}, "applies to gdrive and onedrive sources only"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := cloudRun(t, cfg, c.args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", r.code, r.stderr, ExitUsage, c.want)
			}
		})
	}
}

// TestAuthEntries: auth new writes an entry naming where its token goes
// (config-token://PROVIDER/NAME by default, a file path absolute), never a
// token; a second entry of one name is refused; list and show print it;
// login of an entry without an OAuth client says which flag gives one.
func TestAuthEntries(t *testing.T) {
	t.Parallel()
	cfg := t.TempDir()
	if r := cloudRun(t, cfg, "auth", "new", "-name", "g", "-provider", "google"); r.code != ExitOK {
		t.Fatalf("auth new: %+v", r)
	}
	if r := cloudRun(t, cfg, "auth", "new", "-name", "g", "-provider", "google"); r.code == ExitOK || !strings.Contains(r.stderr, `auth "g"`) {
		t.Errorf("a second auth new of one name: %+v", r)
	}
	if r := cloudRun(t, cfg, "auth", "new", "-name", "ms", "-provider", "onedrive", "-onedrive-client-id", "id", "-onedrive-token-file", "rel/tok.json"); r.code != ExitOK {
		t.Fatalf("auth new: %+v", r)
	}
	list := cloudRun(t, cfg, "auth", "list")
	abs, err := filepath.Abs("rel/tok.json")
	if err != nil {
		t.Fatal(err)
	}
	if list.code != ExitOK || !strings.Contains(list.stdout, "config-token://google/g") || !strings.Contains(list.stdout, "file://"+filepath.ToSlash(abs)) {
		t.Errorf("auth list: %+v", list)
	}
	show := cloudRun(t, cfg, "auth", "show", "-json", "g")
	if show.code != ExitOK || !strings.Contains(show.stdout, `"logged_in": false`) {
		t.Errorf("auth show: %+v", show)
	}
	login := cloudRun(t, cfg, "auth", "login", "g")
	if login.code != ExitUsage || !strings.Contains(login.stderr, "-google-credentials") {
		t.Errorf("auth login without a client: %+v", login)
	}
}
