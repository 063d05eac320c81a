package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/store"
)

func runInit(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	noEnc := fs.Bool("no-encryption", false, "create an unencrypted repository")
	recovery := fs.Bool("add-recovery-key", false, "also create a 24-word recovery key (shown once)")
	prompt := fs.Bool("prompt", false, "with -encryption-key or -kms-key-arn: also add a password slot (the password from -password, else asked on the terminal)")
	if err := a.parseNoArgs(fs, args); err != nil {
		return err
	}
	if *noEnc && a.g.repo.KMSKeyARN != "" {
		return usageErr("-no-encryption cannot be combined with -kms-key-arn")
	}
	st, err := a.openStore(ctx, true)
	if err != nil {
		return err
	}
	defer a.closeStore()
	opts := repo.InitOptions{NoEncryption: *noEnc, AddRecoveryKey: *recovery}
	if !*noEnc {
		if opts.Credentials, err = a.initCredentials(ctx, *prompt); err != nil {
			return err
		}
		if opts.Credentials == (repo.Credentials{}) {
			return usageErr("give -password (or CLOUDSTIC_PASSWORD), -encryption-key, -kms-key-arn, or -no-encryption")
		}
	}
	r, words, err := operation.Init(ctx, st, opts)
	if errors.Is(err, repo.ErrAlreadyInitialized) {
		return fmt.Errorf("a repository already exists at %s; nothing was changed", a.g.repo.URI)
	}
	if err != nil {
		return err
	}
	if o, err := a.openOptions(); err == nil {
		if err := operation.RememberEncrypted(r, st, o); err != nil {
			a.warnf("%v (this host will not notice if the repository's encryption is switched off)", err)
		}
	}
	cfg := r.Config()
	if a.g.json {
		a.writeJSON(initResult{ID: cfg.ID, Store: store.Describe(st), Encrypted: cfg.Encrypted, RecoveryKey: words})
		return nil
	}
	fmt.Fprintf(a.io.Stdout, "Created repository %s at %s (encrypted: %v)\n", cfg.ID[:8], a.g.repo.URI, cfg.Encrypted)
	if words != "" {
		fmt.Fprintf(a.io.Stdout, "\nRecovery key (write it down now; it is not shown again):\n\n  %s\n\n", words)
	}
	return nil
}

// initCredentials returns the credentials init makes slots for. A platform
// or KMS key gets its slot; a password slot is added beside one only with
// -prompt (a CLOUDSTIC_PASSWORD left in the environment must not quietly
// become a second way in). Without a key, the password is the credential.
func (a *app) initCredentials(ctx context.Context, prompt bool) (repo.Credentials, error) {
	keyed := a.g.encryptionKey != "" || a.g.repo.KMSKeyARN != ""
	if !keyed {
		if prompt {
			return repo.Credentials{}, usageErr("-prompt adds a password slot beside -encryption-key or -kms-key-arn; give one of them")
		}
		return a.credentials(ctx, true)
	}
	c, err := a.credentials(ctx, true)
	if err != nil {
		return c, err
	}
	c.RecoveryKey = ""
	if !prompt {
		c.Password = ""
		return c, nil
	}
	if c.Password == "" {
		if c.Password, err = a.askPassword(true); err != nil {
			return c, err
		}
		if c.Password == "" {
			return c, usageErr("-prompt needs a terminal to ask for the password, or -password (CLOUDSTIC_PASSWORD)")
		}
	}
	return c, nil
}
