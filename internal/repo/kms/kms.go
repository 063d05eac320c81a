package kms

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"

	"github.com/cloudstic/cloudstic/internal/awsconf"
)

// ContextKey is the encryption-context key that names the repository.
const ContextKey = "cloudstic:repository-id"

// Errors of Encrypt and Decrypt, wrapped with the key and the cause.
var (
	// ErrUnreachable means no answer came from the KMS endpoint.
	ErrUnreachable = errors.New("KMS is unreachable")
	// ErrAccessDenied means the credentials may not use the key.
	ErrAccessDenied = errors.New("access to the KMS key is denied")
	// ErrKeyDisabled means the key is disabled or pending deletion.
	ErrKeyDisabled = errors.New("the KMS key is disabled")
	// ErrKeyNotFound means no such key (or alias) exists in the region.
	ErrKeyNotFound = errors.New("the KMS key does not exist")
	// ErrWrongKey means the ciphertext was made by another KMS key.
	ErrWrongKey = errors.New("wrong KMS key for this key slot")
	// ErrNoRegion means neither the key ARN, Config.Region nor the AWS
	// configuration names a region.
	ErrNoRegion = errors.New("no AWS region for KMS: give a key ARN or a region")
	// ErrContextMismatch means KMS refused the ciphertext for this
	// repository's encryption context: the slot belongs to another
	// repository, or was altered.
	ErrContextMismatch = errors.New("KMS refused the key slot for this repository (encryption context mismatch: a slot from another repository, or a damaged one)")
)

// Client bounds: KMS answers in milliseconds; an unreachable endpoint
// should fail in seconds, not minutes.
const (
	maxAttempts    = 3
	connectTimeout = 3 * time.Second
	requestTimeout = 30 * time.Second
)

// Config selects the key and where KMS is.
type Config struct {
	// KeyARN names the key: a key ARN, key id, alias name ("alias/x") or
	// alias ARN (required).
	KeyARN string
	// Region defaults to the region in KeyARN when it is an ARN, else to
	// the SDK's (AWS_REGION, the shared config).
	Region string
	// Endpoint is a custom KMS endpoint URL (tests, VPC endpoints).
	Endpoint string
	// Logf, when set, receives the SDK's own log lines (never bodies).
	Logf func(format string, args ...any)
}

// Client is a KMS key ready to wrap and unwrap master secrets.
type Client struct {
	api    *kms.Client
	keyARN string
}

// Open loads the AWS configuration and credentials for cfg. It makes no
// KMS request.
func Open(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.KeyARN == "" {
		return nil, errors.New("kms: no key given")
	}
	region := cfg.Region
	if region == "" {
		region = arnRegion(cfg.KeyARN)
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = connectTimeout }).
		WithTransportOptions(func(tr *http.Transport) { tr.ResponseHeaderTimeout = requestTimeout })
	awsCfg, err := awsconf.Load(ctx, awsconf.Options{
		Region:     region,
		HTTPClient: httpClient,
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = maxAttempts })
		},
		Logf: cfg.Logf,
	})
	if err != nil {
		return nil, fmt.Errorf("kms: %w", err)
	}
	if awsCfg.Region == "" {
		return nil, fmt.Errorf("kms: %w", ErrNoRegion)
	}
	api := kms.NewFromConfig(awsCfg, func(o *kms.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		// Bodies carry plaintext key material: never log them.
		o.ClientLogMode &^= aws.LogRequestWithBody | aws.LogResponseWithBody
	})
	return &Client{api: api, keyARN: cfg.KeyARN}, nil
}

// KeyARN returns the key as given in Config.
func (c *Client) KeyARN() string { return c.keyARN }

// Encrypt encrypts plaintext under the key for repository repoID and
// returns the ciphertext blob and the full ARN of the key that made it.
func (c *Client) Encrypt(ctx context.Context, plaintext []byte, repoID string) ([]byte, string, error) {
	out, err := c.api.Encrypt(ctx, &kms.EncryptInput{
		KeyId:             aws.String(c.keyARN),
		Plaintext:         plaintext,
		EncryptionContext: map[string]string{ContextKey: repoID},
	})
	if err != nil {
		return nil, "", fmt.Errorf("kms: encrypt with %s: %w", c.keyARN, classify(err))
	}
	return out.CiphertextBlob, aws.ToString(out.KeyId), nil
}

// Decrypt decrypts a blob that Encrypt made for repository repoID. KMS is
// told to use this client's key, so a blob made by another key fails with
// ErrWrongKey (or, from servers that cannot tell, ErrContextMismatch).
func (c *Client) Decrypt(ctx context.Context, blob []byte, repoID string) ([]byte, error) {
	out, err := c.api.Decrypt(ctx, &kms.DecryptInput{
		KeyId:             aws.String(c.keyARN),
		CiphertextBlob:    blob,
		EncryptionContext: map[string]string{ContextKey: repoID},
	})
	if err != nil {
		return nil, fmt.Errorf("kms: decrypt with %s: %w", c.keyARN, classify(err))
	}
	return out.Plaintext, nil
}

// classify maps a KMS error to this package's sentinels, keeping the cause
// only when none fits.
func classify(err error) error {
	var (
		disabled   *types.DisabledException
		state      *types.KMSInvalidStateException
		notFound   *types.NotFoundException
		incorrect  *types.IncorrectKeyException
		ciphertext *types.InvalidCiphertextException
		apiErr     smithy.APIError
		respErr    *awshttp.ResponseError
	)
	switch {
	case errors.As(err, &disabled), errors.As(err, &state):
		return ErrKeyDisabled
	case errors.As(err, &notFound):
		return ErrKeyNotFound
	case errors.As(err, &incorrect):
		return ErrWrongKey
	case errors.As(err, &ciphertext):
		return ErrContextMismatch
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "AccessDeniedException":
		return ErrAccessDenied
	case errors.As(err, &respErr) && (respErr.HTTPStatusCode() == http.StatusForbidden || respErr.HTTPStatusCode() == http.StatusUnauthorized):
		return ErrAccessDenied
	case errors.As(err, &respErr) && respErr.HTTPStatusCode() != 0:
		return err // the server answered: keep what it said
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	// No HTTP response at all: connection refused, DNS, timeouts. The
	// network error alone says what happened, without the SDK's framing.
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Errorf("%w: %w", ErrUnreachable, opErr)
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// arnRegion returns the region of an ARN (arn:aws:kms:REGION:ACCOUNT:...),
// or "" for key ids and alias names.
func arnRegion(s string) string {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) == 6 && parts[0] == "arn" {
		return parts[3]
	}
	return ""
}
