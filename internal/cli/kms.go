package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudstic/cloudstic/internal/awsconf"
	"github.com/cloudstic/cloudstic/internal/repo/kms"
)

// openKMS returns a KMS client for keyARN with the -kms-region and
// -kms-endpoint settings. It makes no KMS request.
func (a *app) openKMS(ctx context.Context, keyARN string) (*kms.Client, error) {
	var logf func(string, ...any)
	if a.g.debug {
		logf = a.debugf
	}
	c, err := kms.Open(ctx, kms.Config{KeyARN: keyARN, Region: a.g.repo.KMSRegion, Endpoint: a.g.repo.KMSEndpoint, Logf: logf})
	if errors.Is(err, awsconf.ErrNoCredentials) {
		return nil, fmt.Errorf("%w: give AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE for KMS", err)
	}
	if errors.Is(err, kms.ErrNoRegion) {
		return nil, fmt.Errorf("%w (-kms-region, CLOUDSTIC_KMS_REGION or AWS_REGION)", err)
	}
	return c, err
}
