package cli

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cloudstic/cloudstic/internal/config"
)

// examples returns the examples printed by `help COMMAND` and `COMMAND -h`.
func examples(name string) []string {
	switch name {
	case "init":
		return []string{"cloudstic init -password secret", "cloudstic init -store s3:my-bucket/backups -add-recovery-key",
			"cloudstic init -store local:/mnt/usb/backup -no-encryption", "cloudstic init -adopt-slots    # succeeds again on a repository the password opens",
			"cloudstic init -store s3:my-bucket/backups -kms-key-arn arn:aws:kms:eu-west-1:111122223333:key/ID -prompt"}
	case "backup":
		return []string{"cloudstic backup -source local:~/Documents -tag daily",
			"cloudstic backup -source local:/srv -exclude '*.tmp' -exclude 'cache/' -exclude-caches -quiet",
			"cloudstic backup -source local:~/ -exclude-file ~/.config/cloudstic/excludes -exclude-if-present .nobackup -one-file-system",
			"cloudstic backup -source local:/srv -ignore-empty-snapshot -host web1",
			"cloudstic backup -source local:/mnt/old-disk -time '2019-06-30 12:00:00' -tag import",
			"cloudstic backup -source local:. -dry-run -json",
			"cloudstic backup -source sftp://me@web1/var/www -source-sftp-key ~/.ssh/id_backup -exclude 'cache/'",
			"pg_dump mydb | cloudstic backup -stdin -stdin-filename mydb.sql",
			"cloudstic backup -stdin-from-command -stdin-filename mydb.sql -- pg_dump --no-owner mydb",
			"cloudstic backup -source local:/etc -source local:/home/me/Documents -files-from ~/.config/cloudstic/extra-paths",
			"cloudstic backup -source gdrive-changes -auth-ref google-work    # My Drive, incremental from the change feed",
			"cloudstic backup -source 'gdrive://Company Data/Reports' -auth-ref google-work",
			"cloudstic backup -source onedrive-changes:/Documents -auth-ref ms-personal"}
	case "auth":
		return []string{"cloudstic auth new -name google-work -provider google -google-credentials ~/client_secret.json",
			"cloudstic auth new -name ms-personal -provider onedrive -onedrive-client-id 00000000-0000-0000-0000-000000000000 -onedrive-token-ref secret-service://cloudstic/ms-personal",
			"cloudstic auth login google-work", "cloudstic auth login -device ms-personal    # a host without a browser",
			"cloudstic auth list", "cloudstic auth show -json google-work"}
	case "restore":
		return []string{"cloudstic restore -output ./restored", "cloudstic restore 1a2b3c -output docs.zip -path Documents/",
			"cloudstic restore latest -path notes.txt -output ./out",
			"cloudstic restore -output ~/photos -include '*.jpg' -exclude 'thumbs/'",
			"cloudstic restore -output /srv/data -overwrite if-changed -delete -verify    # make /srv/data match the snapshot"}
	case "list":
		return []string{"cloudstic list", "cloudstic list -json"}
	case "ls":
		return []string{"cloudstic ls", "cloudstic ls -l 1a2b3c", "cloudstic ls latest -json"}
	case "diff":
		return []string{"cloudstic diff 1a2b3c latest", "cloudstic diff 1a2b3c    # compare with its parent",
			"cloudstic diff 1a2b3c 4d5e6f -json"}
	case "cat":
		return []string{"cloudstic cat config", "cloudstic cat snapshot latest", "cloudstic cat tree 4f1c...(64 hex digits)",
			"cloudstic cat lock index/lock.exclusive", "cloudstic cat -json config snapshot/1a2b3c4d    # [{\"key\": ..., \"data\": ...}, ...]"}
	case "key":
		return []string{"cloudstic key list", "cloudstic key add -label laptop -new-password s3cret",
			"cloudstic key add-recovery", "cloudstic key passwd -new-password n3w", "cloudstic key remove laptop",
			"cloudstic key add -kms-key-arn arn:aws:kms:eu-west-1:111122223333:key/ID    # opened with the password",
			"cloudstic key add-recovery -kms-key-arn arn:aws:kms:eu-west-1:111122223333:key/ID"}
	case "forget":
		return []string{"cloudstic forget 1a2b3c", "cloudstic forget -keep-daily 7 -keep-weekly 4 -keep-monthly 12 -dry-run",
			"cloudstic forget -keep-last 10 -prune", "cloudstic forget -tag daily -prune    # remove every snapshot tagged daily"}
	case "tag":
		return []string{"cloudstic tag -add keep 1a2b3c", "cloudstic tag -remove daily -add monthly -tag daily -dry-run",
			"cloudstic tag -set release-1.0 latest", "cloudstic tag -set \"\" 1a2b3c 4d5e6f    # remove every tag"}
	case "prune":
		return []string{"cloudstic prune -dry-run", "cloudstic prune -max-unused 10%"}
	case "check":
		return []string{"cloudstic check", "cloudstic check -read-data", "cloudstic check -read-data-subset 10%"}
	case "repair":
		return []string{"cloudstic repair snapshots -dry-run    # list the snapshots that fail authentication or decoding",
			"cloudstic repair snapshots", "cloudstic repair index -dry-run", "cloudstic repair index && cloudstic check -read-data",
			"cloudstic repair config    # add the MAC to a config written before configs had one"}
	case "version":
		return []string{"cloudstic version -json"}
	case "locks":
		return []string{"cloudstic locks", "cloudstic locks -json"}
	case "break-lock":
		return []string{"cloudstic break-lock -stale-only", "cloudstic break-lock"}
	case "completion":
		return []string{"cloudstic completion bash > /etc/bash_completion.d/cloudstic    # or: source <(cloudstic completion bash)",
			"cloudstic completion zsh > \"${fpath[1]}/_cloudstic\"",
			"cloudstic completion fish > ~/.config/fish/completions/cloudstic.fish"}
	case "help":
		return []string{"cloudstic help backup"}
	}
	if ex := browseExamples(name); ex != nil {
		return ex
	}
	return profileExamples(name)
}

// printExamples writes the examples of a command, if it has any.
func printExamples(w io.Writer, name string) {
	ex := examples(name)
	if len(ex) == 0 {
		return
	}
	fmt.Fprintln(w, "\nexamples:")
	for _, e := range ex {
		fmt.Fprintln(w, "  "+e)
	}
}

// hideSecretDefaults blanks the printed defaults of flags whose default
// comes from a secret environment variable, so -h never shows a password:
// the store settings config.StoreSettings marks secret, key's
// -new-password and backup's -source-sftp-password.
func hideSecretDefaults(fs *flag.FlagSet) {
	secret := map[string]bool{"new-password": true, "source-sftp-password": true}
	for _, s := range config.StoreSettings {
		secret[s.Flag] = s.Secret
	}
	fs.VisitAll(func(f *flag.Flag) {
		if secret[f.Name] {
			f.DefValue = ""
		}
	})
}

// completionShells are the shells `completion` writes scripts for.
func completionShells() []string { return []string{"bash", "zsh", "fish"} }

func runCompletion(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("Usage: cloudstic completion bash|zsh|fish")
	}
	spec := completionSpec(ctx, a)
	var buf bytes.Buffer
	switch pos[0] {
	case "bash":
		writeBash(&buf, spec, false)
	case "zsh":
		writeBash(&buf, spec, true)
	case "fish":
		writeFish(&buf, spec)
	default:
		return usageErr("Unsupported shell %q%s: want bash, zsh or fish", pos[0], didYouMean(pos[0], completionShells()))
	}
	if a.g.json {
		a.writeJSON(completionResult{Shell: pos[0], Script: buf.String()})
		return nil
	}
	_, err = a.io.Stdout.Write(buf.Bytes())
	return err
}

// compCommand is what the completion scripts know about one command.
type compCommand struct {
	name, summary string
	flags         []compFlag
	args          []string // words for the first argument
}

type compFlag struct{ name, usage string }

// completionSpec collects every command's flags by running it with -h
// into a buffer (no store is opened: flag parsing stops first).
func completionSpec(ctx context.Context, a *app) []compCommand {
	var out []compCommand
	for _, c := range commands() {
		var buf bytes.Buffer
		sub := &app{io: IO{Stdin: bytes.NewReader(nil), Stdout: &buf, Stderr: io.Discard, Getenv: func(string) string { return "" }}, cmd: &c}
		//nolint:errcheck // -h returns flag.ErrHelp; only the printed flags matter
		c.run(ctx, sub, []string{"-h"})
		cc := compCommand{name: c.name, summary: c.summary, flags: parseFlagHelp(buf.String())}
		switch c.name {
		case "completion":
			cc.args = completionShells()
		case "key":
			cc.args = keySubcommands()
		case "repair":
			cc.args = repairSubcommands()
		case "cat":
			cc.args = catKinds()
		case "store":
			cc.args = []string{"list", "show", "new", "verify", "init"}
		case "profile":
			cc.args = []string{"list", "show", "new"}
		}
		out = append(out, cc)
	}
	help := compCommand{name: "help", summary: "show the help of a command"}
	for _, c := range out {
		help.args = append(help.args, c.name)
	}
	return append(out, help)
}

// parseFlagHelp reads flag names and first usage lines from the output of
// flag.PrintDefaults.
func parseFlagHelp(help string) []compFlag {
	var flags []compFlag
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  -") {
			// "  -name type", or "  -x\tusage" for one-letter flags.
			rest := strings.TrimPrefix(line, "  -")
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			f := compFlag{name: rest[:end]}
			if _, usage, ok := strings.Cut(rest, "\t"); ok {
				f.usage = strings.TrimSpace(usage)
			}
			flags = append(flags, f)
		} else if strings.HasPrefix(line, "    \t") && len(flags) > 0 && flags[len(flags)-1].usage == "" {
			flags[len(flags)-1].usage = strings.TrimSpace(line)
		}
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].name < flags[j].name })
	return flags
}

func writeBash(w io.Writer, spec []compCommand, zsh bool) {
	if zsh {
		fmt.Fprint(w, "#compdef cloudstic\n# zsh completion for cloudstic (uses bash completion emulation)\n"+
			"autoload -U +X bashcompinit && bashcompinit\n")
	} else {
		fmt.Fprint(w, "# bash completion for cloudstic: source <(cloudstic completion bash)\n")
	}
	var names []string
	for _, c := range spec {
		names = append(names, c.name)
	}
	// Values: after a flag that takes one, the URI prefixes or the names
	// `cloudstic __complete` finds (it is the binary as typed, so
	// ./cloudstic completes too); then a command's flags, its first
	// argument, a store's or profile's name, or snapshot ids.
	fmt.Fprintf(w, `_cloudstic() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="${COMP_WORDS[1]}" flags="" args="" values="" kind=""
    [ "$COMP_CWORD" -ge 1 ] && prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "%s" -- "$cur"))
        return
    fi
    case "$prev" in
        -store|--store|-from-store|--from-store|-uri|--uri) values="%s" ;;
        -source|--source) values="%s" ;;
        -profile|--profile|-from-profile|--from-profile) kind=profiles ;;
        -store-ref|--store-ref) kind=stores ;;
        -auth-ref|--auth-ref) kind=auth ;;
    esac
    if [ -z "$kind" ] && [ "$COMP_CWORD" -eq 3 ]; then
        case "$cmd ${COMP_WORDS[2]}" in
            "store show"|"store verify"|"store init") kind=stores ;;
            "profile show") kind=profiles ;;
        esac
    fi
    if [ -n "$kind" ]; then
        values="$("${COMP_WORDS[0]}" %s "$kind" "${COMP_WORDS[@]:2}" 2>/dev/null)"
    fi
    if [ -n "$values" ] || [ -n "$kind" ]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
        return
    fi
    case "$cmd" in
`, strings.Join(names, " "), strings.Join(storeURIPrefixes(), " "), strings.Join(sourceURIPrefixes(), " "), completeCommand)
	for _, c := range spec {
		var fl []string
		for _, f := range c.flags {
			fl = append(fl, "-"+f.name)
		}
		fmt.Fprintf(w, "        %s) flags=%q; args=%q ;;\n", c.name, strings.Join(fl, " "), strings.Join(c.args, " "))
	}
	fmt.Fprintf(w, `    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$args" ]; then
        COMPREPLY=($(compgen -W "$args" -- "$cur"))
    else
        case " %s " in
            *" $cmd "*) COMPREPLY=($(compgen -W "latest $("${COMP_WORDS[0]}" %s snapshots "${COMP_WORDS[@]:2}" 2>/dev/null)" -- "$cur")) ;;
        esac
    fi
}
complete -o default -F _cloudstic cloudstic
`, strings.Join(snapshotCommands(), " "), completeCommand)
}

// fishHelpers are the functions the fish script's conditions and values
// call. A command substitution cannot name the command to run, so
// __cloudstic_values runs the program as typed through `command`;
// __cloudstic_at says where the cursor is, as bash's COMP_CWORD does;
// __cloudstic_after reads the previous word, as bash's $prev.
const fishHelpers = `function __cloudstic_values --description 'cloudstic __complete KIND WORDS...: names and ids for a value'
    set -l w (commandline -opc) (commandline -ct)
    command $w[1] __complete $argv $w[3..-1] 2>/dev/null
end
function __cloudstic_at --description 'N CMD [SUB...]: N words before the cursor, the 2nd CMD, the 3rd one of SUB'
    set -l w (commandline -opc)
    test (count $w) -eq $argv[1]; and test "$w[2]" = "$argv[2]"; or return 1
    test (count $argv) -le 2; or contains -- "$w[3]" $argv[3..-1]
end
function __cloudstic_after --description 'FLAG...: the word before the cursor is one of FLAG'
    set -l w (commandline -opc)
    test (count $w) -ge 3; and contains -- "$w[-1]" $argv
end
`

func writeFish(w io.Writer, spec []compCommand) {
	fmt.Fprint(w, "# fish completion for cloudstic\ncomplete -c cloudstic -f\n"+fishHelpers)
	for _, c := range spec {
		fmt.Fprintf(w, "complete -c cloudstic -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range spec {
		cond := "__fish_seen_subcommand_from " + c.name
		for _, f := range c.flags {
			fmt.Fprintf(w, "complete -c cloudstic -n %s -o %s -d %s\n", fishQuote(cond), f.name, fishQuote(f.usage))
		}
		if len(c.args) > 0 { // the first argument only, as in bash
			fmt.Fprintf(w, "complete -c cloudstic -n %s -a %s\n", fishQuote("__cloudstic_at 2 "+c.name), fishQuote(strings.Join(c.args, " ")))
		}
	}
	writeFishValues(w)
}

// writeFishValues completes flag values and arguments in fish as bash
// does: after a flag that takes one (whatever the command, as bash reads
// the previous word), URI prefixes or names from profiles.yaml; snapshot
// ids; store and profile names after store show and profile show.
func writeFishValues(w io.Writer) {
	query := func(kind string) string { return "(__cloudstic_values " + kind + ")" }
	values := []struct{ flags, candidates string }{
		{"store from-store uri", strings.Join(storeURIPrefixes(), " ")},
		{"source", strings.Join(sourceURIPrefixes(), " ")},
		{"profile from-profile", query("profiles")},
		{"store-ref", query("stores")},
		{"auth-ref", query("auth")},
	}
	var all []string // every flag whose value is completed
	for _, v := range values {
		var after []string
		for _, name := range strings.Fields(v.flags) {
			after = append(after, "-"+name, "--"+name)
		}
		all = append(all, after...)
		fmt.Fprintf(w, "complete -c cloudstic -n %s -f -a %s\n", fishQuote("__cloudstic_after "+strings.Join(after, " ")),
			fishQuote(v.candidates))
	}
	fmt.Fprintf(w, "complete -c cloudstic -n %s -a %s\n",
		fishQuote("__fish_seen_subcommand_from "+strings.Join(snapshotCommands(), " ")+"; and not __cloudstic_after "+
			strings.Join(all, " ")), fishQuote("latest "+query("snapshots")))
	fmt.Fprintf(w, "complete -c cloudstic -n %s -a %s\n", fishQuote("__cloudstic_at 3 store show verify init"), fishQuote(query("stores")))
	fmt.Fprintf(w, "complete -c cloudstic -n %s -a %s\n", fishQuote("__cloudstic_at 3 profile show"), fishQuote(query("profiles")))
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
