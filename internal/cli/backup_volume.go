package cli

import (
	"flag"
	"strings"
	"unicode"

	"github.com/cloudstic/cloudstic/internal/engine/backup"
)

// volumeFlag is backup's -volume-uuid.
type volumeFlag struct{ uuid string }

func (v *volumeFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&v.uuid, "volume-uuid", "", "group the snapshots of this source by this volume UUID (any host, any mount point) instead of the one detected on portable drives")
}

// options checks the flag and sets it in opts.
func (v *volumeFlag) options(opts *backup.Options) error {
	if v.uuid == "" {
		return nil
	}
	u := strings.ToLower(strings.TrimSpace(v.uuid))
	if u == "" || len(u) > 128 || strings.IndexFunc(u, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return usageErr("-volume-uuid %q: want a UUID, e.g. 956bed6d-2f80-40e0-95e2-f5e3e5bb6f4f", v.uuid)
	}
	opts.VolumeUUID = u
	return nil
}
