package cli

import (
	"context"
	"flag"
	"strings"
)

// subcommand is one subcommand of a command that has them (profile,
// store, schedule).
type subcommand struct {
	name string
	run  func(ctx context.Context, a *app, args []string) error
}

// runSubcommand runs the subcommand of cmd that args[0] names. Without one
// (or with only flags: -h) it prints cmd's help or refuses with usage.
func (a *app) runSubcommand(ctx context.Context, cmd, usage string, subs []subcommand, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return a.subcommandHelp(args, usage)
	}
	names := make([]string, len(subs))
	for i, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, a, args[1:])
		}
		names[i] = s.name
	}
	last := len(names) - 1
	return usageErr("unknown subcommand %q of %s (want %s or %s)", args[0], cmd, strings.Join(names[:last], ", "), names[last])
}

// subcommandHelp prints help for `cloudstic CMD -h` and refuses a missing
// subcommand.
func (a *app) subcommandHelp(args []string, usage string) error {
	if _, err := a.parse(a.flags(), args); err != nil {
		return err
	}
	return usageErr("usage: cloudstic %s", usage)
}

// parseName parses the flags of a subcommand that takes one NAME (profile
// show, store show, store verify, store init); usage is its usage line.
func (a *app) parseName(fs *flag.FlagSet, args []string, usage string) (string, error) {
	pos, err := a.parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageErr("usage: cloudstic %s", usage)
	}
	return pos[0], nil
}
