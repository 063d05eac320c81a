package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudstic/cloudstic/internal/cli"
)

// outcome is what one in-process run of Main printed and returned.
type outcome struct {
	stdout, stderr string
	code           int
}

// mainWith runs cli.Main with env as its whole environment.
func mainWith(t *testing.T, env map[string]string, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Main(context.Background(), args, cli.IO{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
	})
	return outcome{stdout.String(), stderr.String(), code}
}

// check compares an outcome with the wanted exit code and text.
func (o outcome) check(t *testing.T, code int, stdoutHas, stderrHas []string) {
	t.Helper()
	if o.code != code {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", o.code, code, o.stdout, o.stderr)
	}
	for _, s := range stdoutHas {
		if !strings.Contains(o.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, o.stdout)
		}
	}
	for _, s := range stderrHas {
		if !strings.Contains(o.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, o.stderr)
		}
	}
}

// TestArgumentHandling covers what Main does before any repository is
// opened: help, version, unknown commands and flags, usage errors.
func TestArgumentHandling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutHas []string
		stderrHas []string
	}{
		{"no arguments", nil, cli.ExitUsage, []string{"usage: cloudstic COMMAND", "backup", "restore"}, nil},
		{"help", []string{"help"}, cli.ExitOK, []string{"commands:", "init", "backup", "restore", "list", "ls"}, nil},
		{"-h", []string{"-h"}, cli.ExitOK, []string{"commands:"}, nil},
		{"--help", []string{"--help"}, cli.ExitOK, []string{"commands:"}, nil},
		{"help backup", []string{"help", "backup"}, cli.ExitOK, []string{"cloudstic backup", "-source"}, nil},
		{"backup -h", []string{"backup", "-h"}, cli.ExitOK, []string{"usage: cloudstic backup", "-source", "-exclude"}, nil},
		{"restore -help", []string{"restore", "-help"}, cli.ExitOK, []string{"usage: cloudstic restore", "-output", "-format"}, nil},
		{"version", []string{"version"}, cli.ExitOK, []string{"cloudstic " + cli.Version}, nil},
		{"unknown command", []string{"restor"}, cli.ExitUsage, nil, []string{`unknown command "restor"`, `did you mean "restore"`}},
		{"unknown command far", []string{"frobnicate"}, cli.ExitUsage, nil, []string{`unknown command "frobnicate"`}},
		{"unknown flag", []string{"list", "-jsn"}, cli.ExitUsage, nil, []string{"-jsn", "did you mean -json"}},
		{"unknown flag after positional", []string{"ls", "latest", "-jsn"}, cli.ExitUsage, nil, []string{"did you mean -json"}},
		{"flag missing value", []string{"backup", "-source"}, cli.ExitUsage, nil, []string{"-source"}},
		{"bad flag value", []string{"list", "-lock-wait", "soon"}, cli.ExitUsage, nil, []string{"lock-wait"}},
		{"backup without source", []string{"backup"}, cli.ExitUsage, nil, []string{"-source"}},
		{"backup with positional", []string{"backup", "/home"}, cli.ExitUsage, nil, []string{`"/home"`, "-source"}},
		{"backup non-local source", []string{"backup", "-source", "s3:bucket"}, cli.ExitUsage, nil, []string{"local:PATH"}},
		{"backup bad compression", []string{"backup", "-source", "local:/tmp", "-compression", "lz4"}, cli.ExitUsage, nil, []string{`-compression "lz4"`, "fast"}},
		{"backup zero checkpoint interval", []string{"backup", "-source", "local:/tmp", "-checkpoint-interval", "0s"}, cli.ExitUsage, nil,
			[]string{"-checkpoint-interval 0s", "positive duration"}},
		{"backup bad exclude", []string{"backup", "-source", "local:/tmp", "-exclude", "[x"}, cli.ExitUsage, nil, []string{"-exclude"}},
		{"restore two snapshots", []string{"restore", "a", "b"}, cli.ExitUsage, nil, []string{"at most one snapshot"}},
		{"restore bad format", []string{"restore", "-format", "tar"}, cli.ExitUsage, nil, []string{`"tar"`}},
		{"list positional", []string{"list", "extra"}, cli.ExitUsage, nil, []string{`"extra"`}},
		{"init positional", []string{"init", "extra"}, cli.ExitUsage, nil, []string{`"extra"`}},
		{"unknown store type", []string{"list", "-store", "ftp://host/x"}, cli.ExitUsage, nil, []string{"unknown store type"}},
		{"colon path not starting with / or .", []string{"list", "-store", "host:backups"}, cli.ExitUsage, nil, []string{"unknown store type"}},
		{"s3 without bucket", []string{"list", "-store", "s3:"}, cli.ExitUsage, nil, []string{"bucket"}},
		{"bad s3 conditional writes", []string{"list", "-store", "s3:b/x", "-s3-conditional-writes", "cas"}, cli.ExitUsage, nil,
			[]string{`-s3-conditional-writes`, `"cas"`, "auto, create-only or none"}},
		{"bad b2 conditional writes", []string{"list", "-store", "b2:b/x", "-s3-conditional-writes", "yes"}, cli.ExitUsage, nil,
			[]string{`"yes"`, "auto, create-only or none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := mainWith(t, nil, tt.args...)
			o.check(t, tt.code, tt.stdoutHas, tt.stderrHas)
			if tt.code == cli.ExitUsage && len(tt.args) > 0 && strings.Count(strings.TrimSpace(o.stderr), "\n") != 0 {
				t.Errorf("usage error is not one line:\n%s", o.stderr)
			}
		})
	}
}

// TestConditionalWritesEnv: a bad CLOUDSTIC_S3_CONDITIONAL_WRITES is the
// same one-line usage error as the flag, and the flag overrides it.
func TestConditionalWritesEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CLOUDSTIC_S3_CONDITIONAL_WRITES": "sometimes"}
	o := mainWith(t, env, "list", "-store", "s3:b/x")
	o.check(t, cli.ExitUsage, nil, []string{"CLOUDSTIC_S3_CONDITIONAL_WRITES", `"sometimes"`})
	if strings.Count(strings.TrimSpace(o.stderr), "\n") != 0 {
		t.Errorf("usage error is not one line:\n%s", o.stderr)
	}
	// With a valid flag the value is accepted and opening proceeds (and
	// fails later, on the missing endpoint's connection, not on usage).
	o = mainWith(t, env, "list", "-store", "s3:b/x", "-s3-conditional-writes", "none",
		"-s3-endpoint", "http://127.0.0.1:1", "-s3-access-key", "a", "-s3-secret-key", "b")
	if o.code == cli.ExitUsage {
		t.Errorf("valid flag over a bad env value gave a usage error: %s", o.stderr)
	}
}

// TestRepositoryCommands runs init, backup, ls, list and restore in
// process: flags after positionals, the environment defaults, flags
// overriding them, and the -json error document.
func TestRepositoryCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "local:" + filepath.Join(dir, "repo")
	src := filepath.Join(dir, "src")
	env := map[string]string{"CLOUDSTIC_STORE": store, "CLOUDSTIC_PASSWORD": "pw", "HOME": dir}
	mustWrite(t, filepath.Join(src, "hello.txt"), "hello\n")

	mainWith(t, nil, "init").check(t, cli.ExitUsage, nil, []string{"-password"})
	mainWith(t, env, "init").check(t, cli.ExitOK, nil, []string{"Created repository"}) // on stderr, as Cloudstic
	mainWith(t, env, "backup", "-source", "local:"+src, "-tag", "x").check(t, cli.ExitOK, []string{"Snapshot", "saved"}, nil)
	// ~/ in -source is expanded with HOME from the environment.
	mainWith(t, env, "backup", "-source", "local:~/src").check(t, cli.ExitOK, []string{"1 unmodified"}, nil)

	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		code      int
		stdoutHas []string
		stderrHas []string
	}{
		{"env defaults", env, []string{"list"}, cli.ExitOK, []string{"SEQ", src}, nil},
		{"flags after positional", nil, []string{"ls", "latest", "-store", store, "-password", "pw"}, cli.ExitOK, []string{"hello.txt"}, nil},
		{"flag between positionals", nil, []string{"restore", "-store", store, "latest", "-password", "pw", "-dry-run", "-output", filepath.Join(dir, "o")}, cli.ExitOK, []string{"Would restore"}, nil},
		{"double dash", env, []string{"ls", "--", "-notaflag"}, cli.ExitError, nil, []string{"-notaflag"}},
		{"flag overrides env password", env, []string{"list", "-password", "wrong"}, cli.ExitError, nil, []string{"wrong password"}},
		{"flag overrides env store", env, []string{"list", "-store", "local:" + filepath.Join(dir, "none")}, cli.ExitError, nil, []string{"run 'cloudstic init'"}},
		{"no password", map[string]string{"CLOUDSTIC_STORE": store}, []string{"list"}, cli.ExitError, nil, []string{"-password"}},
		{"env store without flag", map[string]string{"CLOUDSTIC_STORE": store, "CLOUDSTIC_PASSWORD": "wrong"}, []string{"ls"}, cli.ExitError, nil, []string{"wrong password"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mainWith(t, tt.env, tt.args...).check(t, tt.code, tt.stdoutHas, tt.stderrHas)
		})
	}

	t.Run("json error document", func(t *testing.T) {
		o := mainWith(t, env, "ls", "-json", "ffffff")
		o.check(t, cli.ExitError, nil, []string{"ffffff"})
		var doc struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}
		dec := json.NewDecoder(strings.NewReader(o.stdout))
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, o.stdout)
		}
		if dec.More() {
			t.Errorf("more than one JSON document on stdout:\n%s", o.stdout)
		}
		if doc.ExitCode != cli.ExitError || !strings.Contains(doc.Error, "ffffff") {
			t.Errorf("error document %+v", doc)
		}
	})
	t.Run("json usage error document", func(t *testing.T) {
		o := mainWith(t, env, "restore", "-json", "-format", "tar")
		o.check(t, cli.ExitUsage, []string{`"exit_code": 2`}, nil)
	})
	t.Run("list json tags", func(t *testing.T) {
		o := mainWith(t, env, "list", "-json")
		var doc struct {
			Snapshots []struct {
				Tags []string `json:"tags"`
			}
		}
		err := json.Unmarshal([]byte(o.stdout), &doc)
		snaps := doc.Snapshots
		if err != nil || len(snaps) != 2 {
			t.Fatalf("list -json: %v, %d snapshots\n%s", err, len(snaps), o.stdout)
		}
		if len(snaps[0].Tags) != 1 || snaps[0].Tags[0] != "x" || snaps[1].Tags == nil {
			t.Errorf("tags %q and %q, want [x] and []", snaps[0].Tags, snaps[1].Tags)
		}
	})
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
