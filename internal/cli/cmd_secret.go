package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/config"
)

// runSecret stores a secret where a reference points, so that profiles
// can name it: `secret set REF`, the secret read from stdin (without echo
// on a terminal), never from the command line.
func runSecret(ctx context.Context, a *app, args []string) error {
	pos, err := a.parse(a.flags(), args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "set" {
		return usageErr("usage: cloudstic secret set REF (the secret is read from stdin)")
	}
	ref := pos[1]
	if _, err := config.ParseRef(ref); err != nil {
		return usageErr("%v", err)
	}
	var secret string
	if f, ok := a.io.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if secret, err = a.prompt(f, "secret for "+ref+": "); err != nil {
			return err
		}
	} else {
		b, err := io.ReadAll(io.LimitReader(a.io.Stdin, 1<<20))
		if err != nil {
			return fmt.Errorf("reading the secret from stdin: %w", err)
		}
		secret = config.TrimNewline(string(b))
	}
	if secret == "" {
		return usageErr("no secret on stdin")
	}
	if err := a.resolver().Store(ctx, ref, secret); err != nil {
		return err
	}
	a.infof("stored %s", ref)
	return nil
}
