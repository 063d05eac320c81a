package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// evil is what an attacker puts into a lock's holder and operation: clear
// the screen, set the window title (OSC 0), return to the line's start
// and forge a line of its own.
const evil = "\x1b[2J\x1b]0;pwned\x07\rforged\nrepository unlocked"

// wantTerminalSafe fails unless everything the run printed is valid UTF-8
// made of graphic characters and line ends: no ESC, BEL, CR, other
// control, bidi control or invalid byte reaches the terminal.
func wantTerminalSafe(t *testing.T, res result) {
	t.Helper()
	for name, out := range map[string]string{"stdout": res.stdout, "stderr": res.stderr} {
		if !utf8.ValidString(out) {
			t.Errorf("%s is not valid UTF-8: %v", name, res)
			continue
		}
		for _, r := range out {
			if r != '\n' && !unicode.IsGraphic(r) {
				t.Errorf("%s holds %U raw: %v", name, r, res)
				break
			}
		}
	}
}

// wantShown fails unless the run's output holds each of the (escaped)
// texts.
func wantShown(t *testing.T, res result, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if !strings.Contains(res.stdout+res.stderr, s) {
			t.Errorf("output does not show %s: %v", s, res)
		}
	}
}

// hostileLock is a live exclusive lock payload whose holder and operation
// hold evil, as anyone who can write to the store can forge it.
func hostileLock(t *testing.T) (data []byte, holder, operation string) {
	t.Helper()
	holder, operation = "host-"+evil+" (pid 1)", "prune-"+evil
	data, err := json.Marshal(map[string]any{"operation": operation, "holder": holder,
		"acquired_at": time.Now().UTC().Format(time.RFC3339), "expires_at": "2999-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return data, holder, operation
}

// TestHostileLockPayload plants a forged exclusive lock whose holder and
// operation hold terminal escapes, CR and LF (in a local store's files,
// and through the S3 API), then runs locks, backup, prune and break-lock:
// none prints a control character, and each shows the fields escaped.
func TestHostileLockPayload(t *testing.T) {
	t.Parallel()
	stores := []struct {
		name  string
		setup func(t *testing.T) (flags []string, plant func(key string, data []byte))
	}{
		{"local", func(t *testing.T) ([]string, func(string, []byte)) {
			st := filepath.Join(t.TempDir(), "store")
			return []string{"-store", "local:" + st}, func(key string, data []byte) {
				p := filepath.Join(st, filepath.FromSlash(key))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"s3", s3Planter},
	}
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			flags, plant := sc.setup(t)
			flags = append(flags, "-password", "right-pw")
			src := t.TempDir()
			if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"init"}, {"backup", "-source", "local:" + src}} {
				if res := run(t, append(args, flags...)...); res.code != 0 {
					t.Fatalf("%v", res)
				}
			}
			data, holder, operation := hostileLock(t)
			plant("index/lock.exclusive", data)
			shown := []string{strconv.Quote(holder), strconv.Quote(operation)}
			blocked := append([]string{"exclusively locked by " + strconv.Quote(holder)}, shown...)
			keyShown := shown
			if sc.name == "local" {
				// And a lock object under a hostile key, unreadable (an
				// S3 listing cannot carry ESC in XML): its key is shown
				// too, and it is what blocks prune.
				key := "index/lock.shared/x" + evil
				plant(key, []byte("garbage"))
				keyShown = append([]string{strconv.Quote(key)}, shown...)
			}
			pruneBlocked := blocked
			if sc.name == "local" {
				pruneBlocked = []string{"lock " + strconv.Quote("index/lock.shared/x"+evil) + " cannot be read"}
			}
			for _, tc := range []struct {
				args []string
				code int
				want []string
			}{
				{[]string{"locks"}, 0, keyShown},
				{[]string{"backup", "-source", "local:" + src}, 1, blocked},
				{[]string{"prune"}, 1, pruneBlocked},
				{[]string{"break-lock"}, 0, append([]string{"removed index/lock.exclusive"}, keyShown...)},
			} {
				res := run(t, append(tc.args, flags...)...)
				if res.code != tc.code {
					t.Errorf("exit %d, want %d: %v", res.code, tc.code, res)
				}
				wantTerminalSafe(t, res)
				wantShown(t, res, tc.want...)
			}
		})
	}
}

// s3Planter is the S3 store of the test server under a prefix of its own,
// and a function that puts objects into it through the S3 API, as an
// attacker holding only the bucket's credentials would.
func s3Planter(t *testing.T) ([]string, func(string, []byte)) {
	names := []string{"S3_TEST_ENDPOINT", "S3_TEST_BUCKET", "S3_TEST_ACCESS_KEY_ID", "S3_TEST_SECRET_ACCESS_KEY"}
	e := map[string]string{}
	for _, n := range names {
		if e[n] = os.Getenv(n); e[n] == "" {
			t.Fatalf(`test server not configured (%s unset): start it with: eval "$(scripts/s3-server.sh)"`, n)
		}
	}
	region := os.Getenv("S3_TEST_REGION")
	if region == "" {
		region = "us-east-1"
	}
	prefix := fmt.Sprintf("hostile-terminal-%d", time.Now().UnixNano())
	if data := os.Getenv("S3_TEST_DATA_DIR"); data != "" {
		// versitygw's posix backend keeps objects as files under
		// DATA/BUCKET/KEY: remove our prefix when done.
		t.Cleanup(func() {
			if err := os.RemoveAll(filepath.Join(data, e["S3_TEST_BUCKET"], prefix)); err != nil {
				t.Error(err)
			}
		})
	}
	client := s3.New(s3.Options{BaseEndpoint: aws.String(e["S3_TEST_ENDPOINT"]), Region: region, UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(e["S3_TEST_ACCESS_KEY_ID"], e["S3_TEST_SECRET_ACCESS_KEY"], "")})
	flags := []string{"-store", "s3:" + e["S3_TEST_BUCKET"] + "/" + prefix, "-s3-endpoint", e["S3_TEST_ENDPOINT"],
		"-s3-region", region, "-s3-access-key", e["S3_TEST_ACCESS_KEY_ID"], "-s3-secret-key", e["S3_TEST_SECRET_ACCESS_KEY"]}
	return flags, func(key string, data []byte) {
		_, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(e["S3_TEST_BUCKET"]),
			Key: aws.String(prefix + "/" + key), Body: strings.NewReader(string(data))})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Hostile file names a source can hold (Linux allows every byte but "/"
// and NUL).
var hostileNames = []string{
	"esc\x1b[2J.txt",
	"title\x1b]0;pwned\x07.txt",
	"cr\rforged.txt",
	"nl\nforged line.txt",
	"bidi\u202etxt.exe",
}

// TestHostileFileNames backs up a source whose file names (and a symlink's
// target, the host name and a tag) hold terminal escapes, CR, LF and a
// bidi override, then runs backup -verbose, list, ls, find, diff and a
// restore that warns about each file: nothing prints a control character,
// every name is shown quoted, and the -json output is valid JSON holding
// the exact names.
func TestHostileFileNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range append([]string{"plain.txt"}, hostileNames[:3]...) {
		if err := os.WriteFile(filepath.Join(src, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const target = "\x1b]0;pwned\x07"
	if err := os.Symlink(target, filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-store", "local:" + filepath.Join(dir, "store"), "-password", "right-pw"}
	host, tag := "host-"+evil, "tag-\u202e"+evil
	backup := func() result {
		res := run(t, append([]string{"backup", "-verbose", "-source", "local:" + src, "-host", host, "-tag", tag}, flags...)...)
		if res.code != 0 {
			t.Fatalf("%v", res)
		}
		wantTerminalSafe(t, res)
		return res
	}
	if res := run(t, append([]string{"init"}, flags...)...); res.code != 0 {
		t.Fatalf("%v", res)
	}
	res := backup()
	wantShown(t, res, quoted(hostileNames[:3])...)
	// The second backup adds the other names and changes one: diff
	// shows both kinds.
	for _, n := range hostileNames[3:] {
		if err := os.WriteFile(filepath.Join(src, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(src, hostileNames[0]), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := []string{hostileNames[0], hostileNames[3], hostileNames[4]}
	res = backup()
	wantShown(t, res, quoted(changed)...)

	all := quoted(append([]string{target}, hostileNames...))
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"list", []string{"list"}, quoted([]string{host, tag})},
		{"ls", []string{"ls"}, all},
		{"ls -l", []string{"ls", "-l"}, all},
		{"find", []string{"find", "*"}, quoted(hostileNames)},
		{"diff", []string{"diff", "latest"}, quoted(changed)},
		{"restore", []string{"restore", "-output", out}, nil},
		// Into the same place again: -verbose names each existing file
		// left alone.
		{"restore over it", []string{"restore", "-verbose", "-output", out}, quoted(hostileNames)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, append(tc.args, flags...)...)
			if res.code != 0 {
				t.Fatalf("%v", res)
			}
			wantTerminalSafe(t, res)
			wantShown(t, res, tc.want...)
		})
	}
	for _, tc := range []struct {
		name  string
		args  []string
		names []string
	}{
		{"list", []string{"list"}, []string{host, tag}},
		{"ls", []string{"ls"}, hostileNames}, {"find", []string{"find", "*"}, hostileNames},
		{"diff", []string{"diff", "latest"}, changed},
	} {
		t.Run(tc.name+" -json", func(t *testing.T) {
			res := run(t, append(append(tc.args, "-json"), flags...)...)
			if res.code != 0 {
				t.Fatalf("%v", res)
			}
			wantTerminalSafe(t, res)
			var doc any
			if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, res.stdout)
			}
			strs := map[string]bool{}
			collectStrings(doc, strs)
			for _, n := range tc.names {
				if !strs[n] && !strs["/"+n] {
					t.Errorf("the JSON does not hold the exact name %q:\n%s", n, res.stdout)
				}
			}
		})
	}
}

// quoted is each name as termtext shows it.
func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

// collectStrings adds every string in a decoded JSON document to set.
func collectStrings(v any, set map[string]bool) {
	switch v := v.(type) {
	case string:
		set[v] = true
	case []any:
		for _, x := range v {
			collectStrings(x, set)
		}
	case map[string]any:
		for _, x := range v {
			collectStrings(x, set)
		}
	}
}

// TestHostileKeySlotLabel forges a key slot's label (plain JSON: no key
// needed to rewrite it) and adds a slot of a hostile kind under a hostile
// key: key list shows them escaped and prints no control character.
func TestHostileKeySlotLabel(t *testing.T) {
	t.Parallel()
	st, flags, _ := repoWithBackup(t)
	slots, err := filepath.Glob(filepath.Join(st, "keys", "*"))
	if err != nil || len(slots) == 0 {
		t.Fatal("no key slots", err)
	}
	var slot map[string]any
	data, err := os.ReadFile(slots[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &slot); err != nil {
		t.Fatal(err)
	}
	label := "label-" + evil
	slot["label"] = label
	if data, err = json.Marshal(slot); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(slots[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	// A second slot under a hostile key, of a hostile kind.
	slot["kind"] = "kind-" + evil
	if data, err = json.Marshal(slot); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(st, "keys", "id"+evil), data, 0o600); err != nil {
		t.Fatal(err)
	}
	res := run(t, append([]string{"key", "list"}, flags...)...)
	wantTerminalSafe(t, res)
	wantShown(t, res, strconv.Quote(label), `"id\x1b[2J`, `kind-\x1b[2J`)
}
