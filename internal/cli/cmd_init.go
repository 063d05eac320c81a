package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
)

func runInit(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	noEnc := fs.Bool("no-encryption", false, "create an unencrypted repository")
	recovery := fs.Bool("add-recovery-key", false, "also create a 24-word recovery key (shown once)")
	adopt := fs.Bool("adopt-slots", false, "when a repository already exists and the credential given opens one of its key slots, adopt it: succeed and change nothing (Cloudstic's flag; a script's init becomes repeatable)")
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
			return usageErr("encryption is required: give -password (or CLOUDSTIC_PASSWORD), -encryption-key or -kms-key-arn; or -no-encryption for an unencrypted repository")
		}
	}
	r, words, err := operation.Init(ctx, st, opts)
	if errors.Is(err, repo.ErrAlreadyInitialized) && *adopt {
		return a.adoptSlots(ctx, *noEnc)
	}
	if errors.Is(err, repo.ErrAlreadyInitialized) {
		return fmt.Errorf("a repository already exists at %s; nothing was changed (-adopt-slots accepts one the credential opens)", a.g.repo.URI)
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
		a.writeJSON(initResult{ID: cfg.ID, Store: operation.DescribeStore(st), Encrypted: cfg.Encrypted, RecoveryKey: words})
		return nil
	}
	// Cloudstic prints init's report, recovery key included, on stderr:
	// its scripts capture it there (2>file).
	w := a.io.Stderr
	if cfg.Encrypted {
		fmt.Fprintln(w, "Created new encryption key slots.")
		if words != "" {
			printRecoveryKey(w, words)
		}
	} else {
		fmt.Fprintln(w, "WARNING: creating unencrypted repository. Your backups will NOT be encrypted at rest.")
	}
	fmt.Fprintf(w, "Repository initialized (encrypted: %v).\n", cfg.Encrypted)
	fmt.Fprintf(w, "Created repository %s at %s (encrypted: %v)\n", cfg.ID[:8], a.g.repo.URI, cfg.Encrypted)
	return nil
}

// adoptSlots is init -adopt-slots on an existing repository: the
// credential given must open it (an unencrypted one needs -no-encryption),
// and nothing is written.
func (a *app) adoptSlots(ctx context.Context, noEnc bool) error {
	a.closeStore() // init's; openRepo opens its own, which runInit closes
	r, err := a.openRepo(ctx)
	if err != nil {
		return fmt.Errorf("a repository already exists at %s and cannot be adopted: %w", a.g.repo.URI, err)
	}
	cfg := r.Reader().Config()
	if cfg.Encrypted == noEnc {
		return fmt.Errorf("a repository already exists at %s (encrypted: %v); nothing was changed", a.g.repo.URI, cfg.Encrypted)
	}
	if a.g.json {
		a.writeJSON(initResult{ID: cfg.ID, Store: a.g.repo.URI, Encrypted: cfg.Encrypted, AdoptedSlots: true})
		return nil
	}
	if cfg.Encrypted {
		fmt.Fprintln(a.io.Stderr, "Adopted existing encryption key slots.")
	}
	fmt.Fprintf(a.io.Stderr, "Repository initialized (encrypted: %v).\n", cfg.Encrypted)
	fmt.Fprintf(a.io.Stderr, "Adopted repository %s at %s (encrypted: %v); nothing was changed\n", cfg.ID[:8], a.g.repo.URI, cfg.Encrypted)
	return nil
}

// printRecoveryKey prints a new recovery key in Cloudstic's banner: a
// script finds the 24 words on the line after "║  ". Callers give it
// stderr, where Cloudstic prints it.
func printRecoveryKey(w io.Writer, words string) {
	rule := strings.Repeat("═", 62)
	blank := "║" + strings.Repeat(" ", 62) + "║"
	fmt.Fprintln(w)
	fmt.Fprintln(w, "╔"+rule+"╗")
	fmt.Fprintln(w, "║                         RECOVERY KEY                         ║")
	fmt.Fprintln(w, "╠"+rule+"╣")
	fmt.Fprintln(w, blank)
	fmt.Fprintf(w, "║  %s\n", words)
	fmt.Fprintln(w, blank)
	fmt.Fprintln(w, "║  Write down these 24 words and keep them in a safe place.    ║")
	fmt.Fprintln(w, "║  They are shown only this once. If every password and key    ║")
	fmt.Fprintln(w, "║  is lost, they are the only way into the repository.         ║")
	fmt.Fprintln(w, blank)
	fmt.Fprintln(w, "╚"+rule+"╝")
	fmt.Fprintln(w)
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
