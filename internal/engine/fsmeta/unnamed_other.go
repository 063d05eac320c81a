//go:build !linux

package fsmeta

import (
	"fmt"
	"os"
)

// CreateUnnamed reports ErrNoUnnamed: only Linux creates files without a
// name (O_TMPFILE). The caller writes to a temporary name instead.
func (w *Writer) CreateUnnamed(rel string) (*os.File, error) {
	return nil, fmt.Errorf("fsmeta: create %s: %w", rel, ErrNoUnnamed)
}

// LinkUnnamed reports ErrNoUnnamed: CreateUnnamed never succeeds here.
func (w *Writer) LinkUnnamed(_ *os.File, rel string) error {
	return fmt.Errorf("fsmeta: link %s: %w", rel, ErrNoUnnamed)
}
