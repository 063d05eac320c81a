package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// globalGroups are the headings `help CMD` sorts the global flags under,
// in the order printed; group names the heading of a flag.
var globalGroups = []string{"store", "encryption", "profiles", "output", "other"}

// group returns the heading of global flag name (one of globalGroups).
func group(name string) string {
	switch {
	case name == "store", name == "lock-wait", name == "no-cache",
		strings.HasPrefix(name, "store-"), strings.HasPrefix(name, "s3-"), strings.HasPrefix(name, "b2-"):
		return "store"
	case strings.HasPrefix(name, "password"), name == "encryption-key", name == "recovery-key", strings.HasPrefix(name, "kms-"):
		return "encryption"
	case name == "profile", name == "profiles-file", name == "all-profiles":
		return "profiles"
	case name == "json", name == "json-progress", name == "verbose", name == "quiet", name == "debug":
		return "output"
	}
	return "other"
}

// printCommandHelp prints `cloudstic CMD -h`: the usage line, the
// command's own flags, then the global ones grouped, then examples.
func (a *app) printCommandHelp(fs *flag.FlagSet) {
	w := a.io.Stdout
	fmt.Fprintf(w, "usage: cloudstic %s\n\n%s\n", a.cmd.usage, a.cmd.summary)
	global := a.flags()
	own := subset(fs, func(f *flag.Flag) bool { return global.Lookup(f.Name) == nil })
	if n := count(own); n > 0 {
		fmt.Fprintln(w, "\nflags:")
		printFlags(w, own)
	}
	for _, g := range globalGroups {
		sub := subset(fs, func(f *flag.Flag) bool { return global.Lookup(f.Name) != nil && group(f.Name) == g })
		if count(sub) > 0 {
			fmt.Fprintf(w, "\nglobal flags (%s):\n", g)
			printFlags(w, sub)
		}
	}
	printExamples(w, a.cmd.name)
}

// subset returns a flag set holding the flags of fs that keep selects,
// with their defaults as fs registered them.
func subset(fs *flag.FlagSet, keep func(*flag.Flag) bool) *flag.FlagSet {
	out := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if keep(f) {
			out.Var(f.Value, f.Name, f.Usage)
			out.Lookup(f.Name).DefValue = f.DefValue // Var reads the value, which flags before -h may have set
		}
	})
	return out
}

func count(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.SetOutput(w)
	hideSecretDefaults(fs)
	fs.PrintDefaults()
}
