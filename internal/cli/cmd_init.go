package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
)

func runInit(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	noEnc := fs.Bool("no-encryption", false, "create an unencrypted repository")
	recovery := fs.Bool("add-recovery-key", false, "also create a 24-word recovery key (shown once)")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := a.openStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeStore()
	opts := repo.InitOptions{NoEncryption: *noEnc, AddRecoveryKey: *recovery}
	if !*noEnc {
		if opts.Credentials, err = a.credentials(true); err != nil {
			return err
		}
		if opts.Credentials == (repo.Credentials{}) {
			return usageErr("give -password (or CLOUDSTIC_PASSWORD), -encryption-key, or -no-encryption")
		}
	}
	r, words, err := repo.Init(ctx, st, opts)
	if errors.Is(err, repo.ErrAlreadyInitialized) {
		return fmt.Errorf("a repository already exists at %s; nothing was changed", a.g.store)
	}
	if err != nil {
		return err
	}
	cfg := r.Config()
	if a.g.json {
		out := map[string]any{"id": cfg.ID, "store": store.Describe(st), "encrypted": cfg.Encrypted}
		if words != "" {
			out["recovery_key"] = words
		}
		a.writeJSON(out)
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "Created repository %s at %s (encrypted: %v)\n", cfg.ID[:8], a.g.store, cfg.Encrypted)
	if words != "" {
		fmt.Fprintf(a.io.Stdout, "\nRecovery key (write it down now; it is not shown again):\n\n  %s\n\n", words)
	}
	return nil
}
