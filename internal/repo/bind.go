package repo

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/store"
)

// ErrNothingToBind means BindConfig was asked of a repository whose config
// needs no MAC: it has one already, or it is unencrypted (no key to make
// one with).
var ErrNothingToBind = errors.New("the repository config needs no binding")

// BindConfig adds the MAC to an encrypted repository's config written
// before configs had one, so that from then on every open proves the
// config unchanged. The config is mutable only here, under the exclusive
// lock: the write goes through the lease's fence, which refuses it once
// the lease is lost; where the store has compare-and-swap the write also
// fails if the config changed since it was read. The repository the
// writer was made from sees the bound config too.
//
// The MAC seals the config as this repository was opened with it. Its
// fields were not authenticated before, but the data already written
// follows them, and DecodeConfig bounds each one.
func (w *ExclusiveWriter) BindConfig(ctx context.Context) error {
	if !w.cfg.Encrypted || w.authenticated {
		return ErrNothingToBind
	}
	st := w.st
	var opts store.PutOptions
	if st.Capabilities().CompareAndSwap {
		info, err := st.Stat(ctx, ConfigKey)
		if err != nil {
			return fmt.Errorf("reading config: %w", err)
		}
		cur, err := ReadConfig(ctx, st)
		if err != nil {
			return err
		}
		if cur != w.cfg {
			return fmt.Errorf("%w: the config changed since the repository was opened", ErrConfigTampered)
		}
		opts.IfVersion = info.Version
	}
	cfg := w.cfg
	if err := cfg.sign(w.key); err != nil {
		return err
	}
	data, err := cfg.encode()
	if err != nil {
		return err
	}
	if _, err := st.Put(ctx, ConfigKey, data, opts); err != nil {
		return fmt.Errorf("writing config: %w", err)
	}
	w.cfg, w.authenticated = cfg, true
	w.from.cfg, w.from.authenticated = cfg, true
	return nil
}

// VerifyStoredConfig reads the config from the store again and checks it
// against the key r was opened with: it must equal the config r was
// opened with and, when it has a MAC, pass it. authenticated reports
// whether it has one (configs written before MACs have none; BindConfig
// adds it). For check, which may run long after the open.
func (r *Repository) VerifyStoredConfig(ctx context.Context) (authenticated bool, err error) {
	cur, err := ReadConfig(ctx, r.st)
	if err != nil {
		return false, err
	}
	if cur.Encrypted != r.cfg.Encrypted {
		return false, fmt.Errorf("%w: the config changed from encrypted %v to %v while the repository was open", ErrConfigTampered, r.cfg.Encrypted, cur.Encrypted)
	}
	if !cur.Encrypted {
		return false, nil
	}
	authenticated, err = cur.verify(r.key)
	if err == nil && authenticated && cur != r.cfg {
		err = fmt.Errorf("%w: the config changed while the repository was open", ErrConfigTampered)
	}
	return authenticated, err
}
