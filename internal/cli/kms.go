package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/awsconf"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
)

// kmsFlags name the AWS KMS key of kms-platform key slots.
type kmsFlags struct {
	keyARN, region, endpoint string
}

func (f *kmsFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&f.keyARN, "kms-key-arn", getenv("CLOUDSTIC_KMS_KEY_ARN"), "AWS KMS key (ARN, key id or alias) of a kms-platform key slot; such slots are tried first (env CLOUDSTIC_KMS_KEY_ARN)")
	fs.StringVar(&f.region, "kms-region", getenv("CLOUDSTIC_KMS_REGION"), "AWS KMS region (env CLOUDSTIC_KMS_REGION; default: the key ARN's region, else AWS_REGION)")
	fs.StringVar(&f.endpoint, "kms-endpoint", getenv("CLOUDSTIC_KMS_ENDPOINT"), "AWS KMS endpoint URL (env CLOUDSTIC_KMS_ENDPOINT)")
}

// openKMS returns a KMS client for keyARN with the -kms-region and
// -kms-endpoint settings. It makes no KMS request.
func (a *app) openKMS(ctx context.Context, keyARN string) (*kms.Client, error) {
	var logf func(string, ...any)
	if a.g.debug {
		logf = a.debugf
	}
	c, err := kms.Open(ctx, kms.Config{KeyARN: keyARN, Region: a.g.kms.region, Endpoint: a.g.kms.endpoint, Logf: logf})
	if errors.Is(err, awsconf.ErrNoCredentials) {
		return nil, fmt.Errorf("%w: give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE for KMS", err)
	}
	if errors.Is(err, kms.ErrNoRegion) {
		return nil, fmt.Errorf("%w (-kms-region, CLOUDSTIC_KMS_REGION or AWS_REGION)", err)
	}
	return c, err
}
