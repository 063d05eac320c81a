package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/cloudstic/cloudstic/internal/engine/operation"
	"github.com/cloudstic/cloudstic/internal/repo"
	"github.com/cloudstic/cloudstic/internal/repo/crypt"
	"github.com/cloudstic/cloudstic/internal/termtext"
)

// keySubcommands are the subcommands of `key`, in help order.
func keySubcommands() []string {
	return []string{"list", "add", "add-recovery", "passwd", "remove"}
}

func runKey(ctx context.Context, a *app, args []string) error {
	fs := a.flags()
	label := fs.String("label", "", "label of the new key slot (default: \"password N\", \"recovery N\"...)")
	newPassword := fs.String("new-password", a.io.Getenv("CLOUDSTIC_NEW_PASSWORD"), "the new password (env CLOUDSTIC_NEW_PASSWORD; prompted on a terminal when missing)")
	newKey := fs.String("new-encryption-key", "", "add a platform key slot for this key (64 hex digits) instead of a password")
	newKMS := fs.String("new-kms-key-arn", "", "add a kms-platform slot for this AWS KMS key while opening with -kms-key-arn (key add -kms-key-arn alone adds one for that key, opening with the other credential given)")
	if len(args) == 0 {
		return usageErr("give a subcommand: %s (run 'cloudstic key -h')", strings.Join(keySubcommands(), ", "))
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list", "add", "add-recovery", "passwd", "remove":
	case "-h", "-help", "--help":
		_, err := a.parse(fs, []string{"-h"})
		return err
	default:
		if strings.HasPrefix(sub, "-") {
			return usageErr("give the subcommand first: key %s [flags]", strings.Join(keySubcommands(), "|"))
		}
		return usageErr("unknown key subcommand %q%s: want one of %s", sub, didYouMean(sub, keySubcommands()), strings.Join(keySubcommands(), ", "))
	}
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case sub == "remove" && len(pos) != 1:
		return usageErr("give the label or id of the key slot to remove (see 'cloudstic key list')")
	case sub != "remove" && len(pos) > 0:
		return usageErr("unexpected argument %q", pos[0])
	}
	if sub == "list" {
		return a.keyList(ctx)
	}
	// "key add -kms-key-arn ARN" adds a slot for ARN: the repository is
	// then opened with the other credential given, not with that key.
	addKMS := *newKMS
	if sub == "add" && addKMS == "" && *newKey == "" && *newPassword == "" && a.g.repo.KMSKeyARN != "" {
		addKMS, a.g.repo.KMSKeyARN = a.g.repo.KMSKeyARN, ""
	}
	if *newKMS != "" && sub != "add" {
		return usageErr("-new-kms-key-arn belongs to 'key add'")
	}
	kr, err := a.openKeyring(ctx)
	if err != nil {
		return err
	}
	defer a.closeStore()
	switch sub {
	case "add":
		if addKMS != "" {
			return a.keyAddKMS(ctx, kr, *label, addKMS)
		}
		return a.keyAdd(ctx, kr, *label, *newPassword, *newKey)
	case "add-recovery":
		return a.keyAddRecovery(ctx, kr, *label)
	}
	// Removing a slot (passwd removes the old one) runs under the
	// exclusive lock, which the operation layer takes; adding one only
	// writes a new, uniquely named object.
	if sub == "passwd" {
		return a.keyPasswd(ctx, kr, *label, *newPassword)
	}
	return a.keyRemove(ctx, kr, pos[0])
}

// openKeyring opens the keyring through the operation layer with the
// current credential (prompted for on a terminal when none was given).
func (a *app) openKeyring(ctx context.Context) (*operation.Keyring, error) {
	o, err := a.openOptions()
	if err != nil {
		return nil, err
	}
	// A credential that could not be had (a prompt, KMS) is reported as
	// it is, not as a refusal of the repository.
	var credErr error
	o.Credentials = func(ctx context.Context) (repo.Credentials, error) {
		c, err := a.credentials(ctx, false)
		credErr = err
		return c, err
	}
	kr, err := operation.OpenKeyring(ctx, o)
	if err == nil {
		a.st = kr
		return kr, nil
	}
	kms := a.g.repo.KMSKeyARN != ""
	switch {
	case credErr != nil:
		return nil, err
	case errors.Is(err, operation.ErrStoreURI), errors.Is(err, operation.ErrNoRepository), errors.As(err, new(*operation.StoreError)):
		return nil, a.openErr(err)
	case errors.Is(err, repo.ErrNotRepository):
		return nil, fmt.Errorf("repository not initialized at %s: run 'cloudstic init'", a.g.repo.URI)
	case errors.Is(err, repo.ErrNotEncrypted):
		return nil, fmt.Errorf("repository at %s is not encrypted: it has no keys to manage", a.g.repo.URI)
	case errors.Is(err, repo.ErrNeedCredential):
		return nil, errors.New("changing keys needs the current credential: give -password (or CLOUDSTIC_PASSWORD), -encryption-key, -recovery-key or -kms-key-arn")
	case errors.Is(err, repo.ErrWrongCredential) && !kms:
		return nil, fmt.Errorf("cannot open repository at %s: wrong password or key (no provided credential matches)", a.g.repo.URI)
	case kms:
		return nil, fmt.Errorf("cannot open repository at %s: %w", a.g.repo.URI, err)
	}
	return nil, err
}

func (a *app) keyList(ctx context.Context) error {
	st, err := a.openStore(ctx, false)
	if err != nil {
		return err
	}
	defer a.closeStore()
	slots, err := operation.ListKeys(ctx, st)
	if errors.Is(err, operation.ErrNoRepository) {
		return fmt.Errorf("repository not initialized at %s: run 'cloudstic init'", a.g.repo.URI)
	} else if err != nil {
		return err
	}
	if a.g.json {
		out := make([]keyListEntry, 0, len(slots))
		for _, s := range slots {
			e := keyListEntry{ID: s.ID, Kind: s.Kind, Label: s.Label, Created: s.Created, KMSKeyARN: s.KMSKeyARN}
			if s.Err != nil {
				e.Error = s.Err.Error()
			}
			out = append(out, e)
		}
		a.writeJSON(out)
		return nil
	}
	tw := tabwriter.NewWriter(a.io.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tLABEL\tCREATED\tKMS KEY")
	for _, s := range slots {
		// A slot is a plain JSON file anyone who can write to the store
		// can forge: its id (its key), kind, label and ARN are rendered.
		kind := termtext.Safe(s.Kind)
		if s.Err != nil {
			kind = termtext.Sprintf("error: %v", s.Err)
		}
		arn := termtext.Safe(s.KMSKeyARN)
		if arn == "" {
			arn = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Safe(s.ID[:min(8, len(s.ID))]), kind, termtext.Safe(s.Label), s.Created.Local().Format("2006-01-02 15:04:05"), arn)
	}
	return tw.Flush()
}

func (a *app) keyAdd(ctx context.Context, kr *operation.Keyring, label, newPassword, newKey string) error {
	kind, secret := crypt.SlotPassword, []byte(newPassword)
	if newKey != "" {
		b, err := crypt.ParsePlatformKey(newKey)
		if err != nil {
			return usageErr("-new-encryption-key: %v", err)
		}
		kind, secret = crypt.SlotPlatform, b
	} else if newPassword == "" {
		pw, err := a.askNewPassword()
		if err != nil {
			return err
		}
		secret = []byte(pw)
	}
	s, err := operation.KeyAdd(ctx, kr, kind, label, secret)
	if errors.Is(err, repo.ErrLabelTaken) {
		return usageErr("%v: choose another -label (see 'cloudstic key list')", err)
	}
	if err != nil {
		return err
	}
	return a.keyReport("added", s, "")
}

// keyAddKMS adds a kms-platform slot for keyARN.
func (a *app) keyAddKMS(ctx context.Context, kr *operation.Keyring, label, keyARN string) error {
	c, err := a.openKMS(ctx, keyARN)
	if err != nil {
		return err
	}
	s, err := operation.KeyAddKMS(ctx, kr, c, label)
	if errors.Is(err, repo.ErrLabelTaken) {
		return usageErr("%v: choose another -label (see 'cloudstic key list')", err)
	}
	if err != nil {
		return err
	}
	return a.keyReport("added", s, "")
}

func (a *app) keyAddRecovery(ctx context.Context, kr *operation.Keyring, label string) error {
	entropy, words, err := crypt.NewRecoveryKey()
	if err != nil {
		return err
	}
	s, err := operation.KeyAdd(ctx, kr, crypt.SlotRecovery, label, entropy)
	if errors.Is(err, repo.ErrLabelTaken) {
		return usageErr("%v: choose another -label (see 'cloudstic key list')", err)
	}
	if err != nil {
		return err
	}
	return a.keyReport("added", s, words)
}

func (a *app) keyPasswd(ctx context.Context, kr *operation.Keyring, label, newPassword string) error {
	if newPassword == "" {
		pw, err := a.askNewPassword()
		if err != nil {
			return err
		}
		newPassword = pw
	}
	if cur, err := kr.Find(ctx, kr.Current()); err == nil && cur.Kind == crypt.SlotKMS {
		return usageErr("key passwd replaces the slot you opened with, here the kms-platform slot %s: add a password with 'key add' instead", cur.ID[:8])
	}
	s, err := operation.KeyPasswd(ctx, kr, newPassword, label)
	if errors.Is(err, repo.ErrLabelTaken) {
		return usageErr("%v: choose another -label (see 'cloudstic key list')", err)
	}
	if err != nil {
		return err
	}
	return a.keyReport("changed", s, "")
}

func (a *app) keyRemove(ctx context.Context, kr *operation.Keyring, ref string) error {
	s, err := operation.KeyRemove(ctx, kr, ref)
	switch {
	case errors.Is(err, repo.ErrKeyNotFound), errors.Is(err, repo.ErrKeyAmbiguous):
		return fmt.Errorf("%w: run 'cloudstic key list' to see the labels and ids", err)
	case errors.Is(err, repo.ErrLastKey):
		return fmt.Errorf("%w %q: add another key first ('cloudstic key add' or 'key add-recovery')", err, s.Label)
	case err != nil:
		return err
	}
	if s.ID == kr.Current() {
		a.warnf("removed the key slot you opened the repository with: use another password or key from now on")
	}
	return a.keyReport("removed", s, "")
}

// keyReport prints the outcome of a key change; words is a new recovery
// phrase, shown once.
func (a *app) keyReport(verb string, s repo.KeySlot, words string) error {
	if a.g.json {
		ref := &keySlotRef{ID: s.ID, Kind: s.Kind, Label: s.Label, KMSKeyARN: s.KMSKeyARN}
		out := keyChangeResult{RecoveryKey: words}
		switch verb {
		case "added":
			out.Added = ref
		case "changed":
			out.Changed = ref
		case "removed":
			out.Removed = ref
		}
		a.writeJSON(out)
		return nil
	}
	switch verb {
	case "changed":
		fmt.Fprintln(a.io.Stdout, termtext.Sprintf("Password changed: new key slot %s (%s); the old slot was removed", s.ID[:8], s.Label))
	default:
		kind := s.Kind
		if s.KMSKeyARN != "" {
			kind += " " + s.KMSKeyARN
		}
		fmt.Fprintln(a.io.Stdout, termtext.Sprintf("Key slot %s %s (%s, %s)", s.ID[:8], verb, kind, s.Label))
	}
	if words != "" {
		printRecoveryKey(a.io.Stderr, words) // as Cloudstic, and init
	}
	return nil
}

// askNewPassword prompts twice for a new password on a terminal.
func (a *app) askNewPassword() (string, error) {
	f, ok := a.io.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", usageErr("give the new password with -new-password (or CLOUDSTIC_NEW_PASSWORD)")
	}
	pw, err := a.prompt(f, "new password: ")
	if err != nil {
		return "", err
	}
	again, err := a.prompt(f, "enter the new password again: ")
	if err != nil {
		return "", err
	}
	if pw != again {
		return "", errors.New("the new passwords do not match; nothing was changed")
	}
	if pw == "" {
		return "", errors.New("the new password is empty; nothing was changed")
	}
	return pw, nil
}
