package awsconf

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go/logging"
)

// Errors of Load.
var (
	// ErrNoCredentials means no credential source was configured: no static
	// keys, no AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, no credentials in
	// the shared files, and no instance role reachable on EC2.
	ErrNoCredentials = errors.New("no AWS credentials found")
	// ErrProfileNotFound means the named shared-config profile exists in
	// neither ~/.aws/config nor ~/.aws/credentials.
	ErrProfileNotFound = errors.New("AWS profile not found")
)

// IMDS probe bounds. On a host outside EC2 the metadata address either
// refuses at once or drops packets; each attempt then ends at the SDK's
// 250 ms connect (500 ms response) timeout. Two attempts per call with at
// most 100 ms between them keep the whole probe (token, then role name)
// near one second in the worst case, while a real instance, whose metadata
// service answers in milliseconds, still gets one retry.
const (
	IMDSMaxAttempts = 2
	imdsMaxBackoff  = 100 * time.Millisecond
)

// Options select region and credentials.
type Options struct {
	// Region is the AWS region (required by the SDK for signing).
	Region string
	// Profile names a shared-config profile; empty uses the default chain.
	Profile string
	// AccessKey and SecretKey are static credentials; when both are empty
	// the SDK's default credential chain is used.
	AccessKey, SecretKey string
	// HTTPClient and Retryer are passed to the SDK unchanged when set.
	HTTPClient config.HTTPClient
	Retryer    func() aws.Retryer
	// Logf, when set, receives the SDK's own log lines (-debug). When nil
	// they are dropped.
	Logf func(format string, args ...any)
}

// Load builds the SDK configuration and fetches credentials once, so that
// a missing or broken credential source fails here with one clear error
// rather than inside the first request.
func Load(ctx context.Context, o Options) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(o.Region),
		config.WithLogger(logger(o.Logf)),
	}
	if o.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTPClient))
	}
	if o.Retryer != nil {
		opts = append(opts, config.WithRetryer(o.Retryer))
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	if o.AccessKey != "" || o.SecretKey != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	var noProfile config.SharedConfigProfileNotExistError
	if errors.As(err, &noProfile) {
		return aws.Config{}, fmt.Errorf("%w: %q is in neither the shared config nor the credentials file", ErrProfileNotFound, noProfile.Profile)
	}
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS config: %w", err)
	}
	// The chain ends at the EC2 instance role only when nothing else is
	// configured: then a failure means there are no credentials at all.
	onlyIMDS := aws.IsCredentialsProvider(cfg.Credentials, (*ec2rolecreds.Provider)(nil))
	if onlyIMDS {
		cfg.Credentials = aws.NewCredentialsCache(ec2rolecreds.New(func(eo *ec2rolecreds.Options) {
			eo.Client = imds.NewFromConfig(cfg, boundIMDS)
		}))
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if ctx.Err() != nil {
			return aws.Config{}, ctx.Err()
		}
		if onlyIMDS {
			if o.Logf != nil {
				o.Logf("aws: credential chain: %v", err)
			}
			return aws.Config{}, fmt.Errorf("%w (tried %s)", ErrNoCredentials, triedSources(o.Profile))
		}
		return aws.Config{}, fmt.Errorf("getting AWS credentials: %w", err)
	}
	return cfg, nil
}

// boundIMDS limits the instance-metadata client's retries (see
// IMDSMaxAttempts). The SDK's own short connect and response timeouts stay.
// Its default "max backoff" wrapper must be turned off: it replaces the
// retryer's backoff with one that waits a full second before every retry.
func boundIMDS(o *imds.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = IMDSMaxAttempts
		so.MaxBackoff = imdsMaxBackoff
	})
	o.DisableDefaultMaxBackoff = true
}

// triedSources names the sources of the default chain that came up empty.
func triedSources(profile string) string {
	files := "the shared config and credentials files"
	if profile != "" {
		files = fmt.Sprintf("profile %q in %s", profile, files)
	}
	return "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, " + files + ", EC2 instance metadata"
}

// logger routes the SDK's log lines to logf, or drops them.
func logger(logf func(string, ...any)) logging.Logger {
	return logging.LoggerFunc(func(c logging.Classification, format string, args ...any) {
		if logf != nil {
			logf("aws sdk %s: "+format, append([]any{c}, args...)...)
		}
	})
}
