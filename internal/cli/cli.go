package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"

	"github.com/cloudstic/cloudstic/internal/engine/operation"

	"github.com/cloudstic/cloudstic/internal/frontend"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitUsage   = 2
	ExitPartial = 3
	// ExitInterrupted: the command was interrupted (Ctrl-C, SIGTERM) and
	// stopped cleanly; the shell's 128 + SIGINT, as restic exits.
	ExitInterrupted = 130
)

// Version is the program version printed by `cloudstic version`. It is a
// variable only so that scripts/release.sh can stamp a release's version
// into the binary (-ldflags -X); nothing assigns it at run time.
var Version = "0.1.0"

// IO is the process environment a command runs in; tests pass their own.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Environ lists the variables the programs a command starts inherit,
	// CLOUDSTIC_ ones and env:// secrets removed (childEnv); nil means
	// they get an empty environment. cmd/cloudstic passes os.Environ.
	Environ func() []string
	// TestStoreWrapper, when set, wraps every store a command opens,
	// below the -debug logging and the lock. It is a test-only switch:
	// test/crash's binary sets it to inject store faults (docs/testing.md);
	// cmd/cloudstic leaves it nil.
	TestStoreWrapper func(operation.Store) operation.Store
	// Dashboard serves `cloudstic ui`; cmd/cloudstic sets it to
	// internal/ui's, which the CLI does not import. Nil: no dashboard.
	Dashboard Dashboard
	// secretEnv collects the variables env:// references read secrets
	// from; warned the files warned about (once a run). Main sets them,
	// and the apps of one run share them.
	secretEnv, warned *nameSet
}

// errUsage marks errors in the command line itself (exit 2).
var errUsage = errors.New("usage")

// errPartial marks a run that completed with some files unreadable (exit 3).
var errPartial = errors.New("completed with errors")

// errReported marks a failure the command already reported in full (for
// example in its -json document): exit 1, nothing more printed on stdout.
var errReported = errors.New("failed")

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string
	run     func(ctx context.Context, a *app, args []string) error
}

func commands() []command {
	return []command{
		{"init", "create a repository", "init [-password P | -encryption-key HEX64 | -kms-key-arn ARN [-kms-region R] [-kms-endpoint URL] | -no-encryption] [-prompt] [-add-recovery-key]", runInit},
		{"backup", "back up a directory, a Google Drive or OneDrive (or a stream: standard input, a command's output)", "backup -source local:PATH|sftp://[USER@]HOST[:PORT]/PATH [-source local:PATH]... [-files-from F]... [-files-from-verbatim F]... [-files-from-raw F]... [-source-sftp-key F] [-source-sftp-password P] [-source-sftp-known-hosts F] [-source-sftp-insecure] [-tag T]... [-exclude PATTERN]... [-exclude-file F]... [-exclude-if-present NAME]... [-exclude-caches] [-exclude-larger-than SIZE] [-one-file-system] [-host NAME] [-time TIME] [-ignore-empty-snapshot] [-skip-xattrs | -xattr-namespaces P,...] [-skip-mode] [-skip-flags] [-volume-uuid UUID] [-compression auto|fast|small|off] [-dry-run] [-metrics-file F] [-checkpoint-interval D] [-profile NAME | -all-profiles] (instead of -source: -stdin [-stdin-filename NAME] | -stdin-from-command [-stdin-filename NAME] -- CMD ARG...) (a cloud drive: -source gdrive[-changes][://DRIVE][/PATH]|onedrive[-changes][://DRIVE][/PATH] [-auth-ref NAME] [-google-credentials F] [-google-credentials-ref REF] [-google-token-file F] [-google-token-ref REF] [-onedrive-client-id ID] [-onedrive-token-file F] [-onedrive-token-ref REF] [-skip-native-files])", runBackup},
		{"restore", "restore a snapshot", "restore [SNAPSHOT|latest] [-output PATH] [-format dir|zip] [-path FILE|DIR/] [-include PAT]... [-exclude PAT]... [-overwrite never|always|if-changed|if-newer] [-delete] [-verify] [-sparse=false] [-no-setuid] [-no-devices] [-no-capabilities] [-dry-run]", runRestore},
		{"list", "list snapshots", "list", runList},
		{"ls", "list the files of a snapshot, or of some of its paths", "ls [SNAPSHOT|latest] [PATH...] [-l]", runLs},
		{"diff", "show what changed between two snapshots", "diff SNAP1 [SNAP2|latest]", runDiff},
		{"find", "search snapshots for files by name, path, time and size", "find [PATTERN...] [-snapshot ID]... [-path-prefix DIR] [-newer T] [-older T] [-size +N|-N|N]... [-i]", runFind},
		{"dump", "write one file of a snapshot to stdout, or a directory as a tar or zip archive", "dump SNAPSHOT|latest PATH [-archive tar|zip]", runDump},
		{"stats", "show sizes, deduplication and compression of snapshots, or the repository's growth", "stats [SNAPSHOT...] [-mode restore-size|files-by-contents|raw-data|blobs-per-file] [-growth]", runStats},
		{"mount", "browse the snapshots as a read-only file system (FUSE)", "mount MOUNTPOINT [-cache-size 64M] [-allow-other]", runMount},
		{"cat", "print a repository object as JSON", "cat config | snapshot ID | tree ID | lock KEY", runCat},
		{"key", "manage the passwords and keys that open the repository", "key list | add [-label L] [-new-password P | -new-encryption-key HEX64 | -kms-key-arn ARN | -new-kms-key-arn ARN] | add-recovery [-label L] | passwd [-new-password P] | remove LABEL|ID", runKey},
		{"forget", "remove snapshots by id or by a retention policy", "forget [SNAPSHOT...] [-keep-last N] [-keep-hourly N] [-keep-daily N] [-keep-weekly N] [-keep-monthly N] [-keep-yearly N] [-tag T]... [-source URI] [-host H] [-group-by source,host,path] [-prune] [-dry-run]", runForget},
		{"tag", "add, remove or replace the tags of snapshots", "tag [-add T]... [-remove T]... [-set T]... [SNAPSHOT... | -tag FILTER...] [-dry-run]", runTag},
		{"copy", "copy snapshots from another repository into this one", copyUsage, runCopy},
		{"rewrite", "remove files from existing snapshots (e.g. a leaked secret); prune then deletes their data", "rewrite [-exclude PATTERN]... [-exclude-file F]... [SNAPSHOT... | -tag T... | -host H...] [-dry-run]", runRewrite},
		{"prune", "delete data no snapshot uses", "prune [-max-unused 30%] [-margin 1m35s] [-dry-run]", runPrune},
		{"check", "verify the repository", "check [SNAPSHOT] [-read-data] [-read-data-subset N/M|P%]", runCheck},
		{"repair", "remove damaged snapshots, rebuild the index from the packs, or bind an older config to the key", "repair snapshots|index|config [-dry-run]", runRepair},
		{"locks", "list repository locks", "locks", runLocks},
		{"ui", "serve a web dashboard: snapshots, growth, live locks; browse, download, restore and run backups from a browser", "ui [-listen 127.0.0.1:8080] [-profile NAME | -all-profiles | -store URI] [-read-only] [-restore-root DIR] [-tls-cert F -tls-key F | -listen-insecure] [-auth-user U -auth-password-file F]", runUI},
		{"tui", "the operator's terminal screen: profiles and their readiness, backup, check, forget+prune, snapshots, live locks", "tui [-profiles-file F]", runTUI},
		{"break-lock", "remove repository locks", "break-lock [-stale-only]", runBreakLock},
		{"profile", "list, show and add backup profiles of profiles.yaml", "profile list | show NAME | new -name N -source S [-store-ref R [-store URI]] [-tag T]... [-auth-ref NAME] [-no-prompt]", runProfile},
		{"store", "list, show, add, verify and initialize the stores of profiles.yaml", "store list | show NAME | new -name N -uri URI [-password-secret REF]... | verify NAME | init [-yes] NAME", runStore},
		{"auth", "list, show, add and log in the cloud drive logins (OAuth) of profiles.yaml", authUsage, runAuth},
		{"source", "list the local file systems a backup could start from, with their mount metadata", sourceUsage + " [-json]", runSource},
		{"setup", "propose backup profiles for this machine's usual folders and portable drives, and write them", setupUsage, runSetup},
		{"schedule", "run backups of profiles from systemd timers, cron, launchd or Task Scheduler", "schedule install|list|remove [-profile NAME | -all-profiles] -every daily|hourly|\"*-*-* 02:30\" [-scheduler systemd|cron|launchd|schtasks] [-dry-run]", runSchedule},
		{"secret", "store a secret where a secret reference points", "secret set REF  (the secret is read from stdin)", runSecret},
		{"completion", "print a shell completion script", "completion bash|zsh|fish", runCompletion},
		{"version", "print the version", "version", runVersion},
	}
}

// Main runs one command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdio IO) int {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	stdio.secretEnv, stdio.warned = &nameSet{}, &nameSet{}
	stdio.Stdout = &recordingWriter{w: stdio.Stdout}
	a := &app{io: stdio, ctx: ctx}
	if len(args) > 1 && args[0] == "help" {
		args = []string{args[1], "-h"} // full help: flags and examples
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		a.printHelp(stdio.Stdout, args)
		if err := a.outputErr(); err != nil {
			fmt.Fprintf(stdio.Stderr, "cloudstic: writing output: %v\n", err)
			return ExitError
		}
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == completeCommand {
		return runComplete(ctx, stdio, args[1:])
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == args[0] {
			c := c
			cmd = &c
		}
	}
	if cmd == nil {
		fmt.Fprintf(stdio.Stderr, "cloudstic: unknown command %q%s (run 'cloudstic help')\n", args[0], suggest(args[0]))
		return ExitUsage
	}
	a.cmd = cmd
	if path := stdio.Getenv(historyEnv); path != "" {
		h, err := openHistory(path, cmd.name)
		if err != nil {
			return a.finish(err)
		}
		a.history = h
	}
	err := cmd.run(ctx, a, args[1:])
	code := a.finish(err)
	if a.history != nil {
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		a.history.exit(code, msg)
	}
	return code
}

// finish prints err, on one line, and maps it to an exit code.
func (a *app) finish(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, errPartial) {
		if werr := a.outputErr(); werr != nil {
			err = fmt.Errorf("writing output: %w", werr)
		}
	}
	code, msg := errorCode(err)
	switch {
	case msg == "":
		return code
	case errors.Is(err, errNoTerminal):
		fmt.Fprintln(a.io.Stderr, msg) // Cloudstic's words, as they are
		return code
	case errors.As(err, new(*exitCodeError)), errors.Is(err, errReported):
		// The command reported in full; with -json, in its document.
		if !a.g.json {
			fmt.Fprintf(a.io.Stderr, "cloudstic %s: %s\n", a.cmd.name, termtext.Safe(msg))
		}
		return code
	}
	if a.g.json {
		a.writeJSON(errorResult{Error: msg, ExitCode: code})
	}
	// The message may name files, keys and lock holders from the store.
	fmt.Fprintf(a.io.Stderr, "cloudstic %s: %s\n", a.cmd.name, termtext.Safe(msg))
	return code
}

// errorCode maps a command's error to its exit code and its one-line
// message ("" when there is nothing to say: success, help, or files a
// backup could not read, which it listed).
func errorCode(err error) (int, string) {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK, ""
	case errors.Is(err, errPartial):
		return ExitPartial, ""
	}
	if ec := (*exitCodeError)(nil); errors.As(err, &ec) {
		return ec.code, frontend.OneLine(err.Error())
	}
	if errors.Is(err, errReported) {
		return ExitError, frontend.OneLine(err.Error())
	}
	code := ExitError
	if errors.Is(err, errUsage) {
		code = ExitUsage
	}
	msg := frontend.OneLine(strings.TrimPrefix(err.Error(), "usage: "))
	// The context of a command ends only when InterruptContext sees a
	// signal: a cancellation that is not a lost lease is an interruption.
	switch {
	case !errors.Is(err, context.Canceled) || errors.Is(err, operation.ErrLeaseLost):
		msg += lockHint(err)
	case errors.Is(err, errDashboardStopped):
		code, msg = ExitInterrupted, errDashboardStopped.Error()
	case errors.Is(err, operation.ErrLockLeft):
		code, msg = ExitInterrupted, "interrupted; nothing already stored was changed, but "+operation.ErrLockLeft.Error()
	default:
		code, msg = ExitInterrupted, "interrupted; the lock was released and nothing already stored was changed"
	}
	return code, msg
}

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// parse parses flags that may be interleaved with positional arguments.
func (a *app) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				a.printCommandHelp(fs)
				return nil, err
			}
			return nil, usageErr("%v%s", err, suggestFlag(fs, args))
		}
		// flag stops after a "--" and drops it: what follows is positional
		// (the command of backup -stdin-from-command), flags included.
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		args = rest
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, a.afterParse(a.ctx, fs)
}

// parseNoArgs parses flags for a command that takes no positional argument.
func (a *app) parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q", pos[0])
	}
	return nil
}

func (a *app) printHelp(w io.Writer, args []string) {
	if len(args) > 1 {
		for _, c := range commands() {
			if c.name == args[1] {
				a.cmd = &c
				fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
				a.g.register(fs, a.io.Getenv)
				fmt.Fprintf(w, "usage: cloudstic %s\n\n%s\n", c.usage, c.summary)
				fmt.Fprintln(w, "\nrun 'cloudstic "+c.name+" -h' for every flag")
				return
			}
		}
	}
	fmt.Fprintf(w, "cloudstic %s: encrypted, deduplicated backups\n\nusage: cloudstic COMMAND [flags]\n\ncommands:\n", Version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nglobal flags: -store URI (default local:./backup_store), -password, -json, -json-progress, -verbose, -quiet, -debug")
	fmt.Fprintln(w, "run 'cloudstic help COMMAND' (or 'cloudstic COMMAND -h') for a command's flags and examples")
}

// suggest returns " (did you mean X?)" for the closest command name.
func suggest(name string) string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if best := closest(name, names); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// suggestFlag returns " (did you mean -X?)" for the first flag in args the
// set does not define (found by looking the names up, not by reading the
// flag package's error text).
func suggestFlag(fs *flag.FlagSet, args []string) string {
	for _, arg := range args {
		if arg == "--" {
			return ""
		}
		if len(arg) < 2 || arg[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if name == "" || fs.Lookup(name) != nil {
			continue
		}
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		sort.Strings(names)
		if best := closest(name, names); best != "" {
			return fmt.Sprintf(" (did you mean -%s?)", best)
		}
		return ""
	}
	return ""
}

// closest returns the candidate within edit distance 2 of s, if any.
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := config.EditDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// writeJSON writes v as the command's JSON document. termtext.JSON
// escapes what encoding/json leaves raw and a terminal could act on (DEL,
// C1 and bidi controls, a RawMessage's bytes): the output is the same
// JSON, safe to read on a terminal.
func (a *app) writeJSON(v any) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		_, err = a.io.Stdout.Write(append(termtext.JSON(data), '\n'))
	}
	if err != nil {
		a.outputFailed(fmt.Errorf("writing JSON: %w", err))
	}
}

func runVersion(_ context.Context, a *app, args []string) error {
	fs := a.flags()
	if _, err := a.parse(fs, args); err != nil {
		return err
	}
	if a.g.json {
		a.writeJSON(versionResult{Version: Version})
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "cloudstic %s\n", Version)
	return nil
}
