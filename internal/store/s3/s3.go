package s3

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloudstic/cloudstic/internal/awsconf"
	"github.com/cloudstic/cloudstic/internal/clock"
	"github.com/cloudstic/cloudstic/internal/store"
)

// Flavor selects provider-specific behaviour.
type Flavor int

const (
	// FlavorS3 is Amazon S3 or a compatible server; conditional writes are probed.
	FlavorS3 Flavor = iota
	// FlavorB2 is Backblaze B2's S3-compatible API: no conditional writes,
	// versioned buckets (lock keys are deleted with all their versions).
	FlavorB2
)

// Defaults and limits.
const (
	defaultRegion         = "us-east-1"
	defaultB2Region       = "us-west-004"
	defaultMaxConnections = 8
	// multipartThreshold: objects larger than this are uploaded in parts.
	multipartThreshold = 64 << 20
	// partSize is the size of each multipart part but the last.
	partSize = 16 << 20
)

// Store is a store.Store on an S3 bucket. It is safe for concurrent use.
type Store struct {
	client    *s3.Client
	transport *http.Transport
	bucket    string
	prefix    string // "" or "prefix/"
	flavor    Flavor
	// caps is set by the capability probe before probed is closed (see
	// startProbe); probeErr says why the probe failed, if it did.
	// probeDone is closed when the probe has also deleted its keys.
	caps      store.Capabilities
	probed    chan struct{}
	probeErr  error
	probeDone chan struct{}
	stopProbe context.CancelFunc
	sem       chan struct{}
	clock     clock.Clock
	logf      func(format string, args ...any)
	// notef gets the lines about riding out failures (Config.notef).
	notef func(format string, args ...any)
	// multipartThreshold and partSize are fields so tests can lower them.
	multipartThreshold int64
	partSize           int64
	// connectTimeout and responseTimeout name the deadlines in errors.
	connectTimeout, responseTimeout time.Duration
	// retry times the SDK's retries (see retryer).
	retry store.Backoff

	requests, bytesUp, bytesDown atomic.Int64
	// date is the server's clock from its answers' Date headers.
	date serverDate
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.RangeReader = (*Store)(nil)
	_ store.RangeOpener = (*Store)(nil)
)

// Open connects to the bucket, checks that it exists and that the
// credentials work (errors wrap ErrBucketNotFound, ErrAccessDenied, or
// awsconf.ErrNoCredentials when no credential source is configured), and
// starts probing the server's conditional-write capabilities (startProbe).
// Close the store when done.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	return open(ctx, cfg)
}

// open is Open with extra client options (tests inject faults with them).
func open(ctx context.Context, cfg Config, extra ...func(*s3.Options)) (*Store, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("s3: no bucket given")
	}
	cfg = cfg.withDefaults()
	s := &Store{
		bucket:             cfg.Bucket,
		flavor:             cfg.Flavor,
		sem:                make(chan struct{}, cfg.MaxConnections),
		clock:              clock.Real{},
		logf:               cfg.Logf,
		notef:              cfg.notef(),
		multipartThreshold: multipartThreshold,
		partSize:           partSize,
		connectTimeout:     cfg.ConnectTimeout,
		responseTimeout:    cfg.ResponseTimeout,
		retry:              retryBackoff(cfg),
	}
	if p := strings.Trim(cfg.Prefix, "/"); p != "" {
		s.prefix = p + "/"
	}
	client, err := s.newClient(ctx, cfg, extra)
	if err != nil {
		return nil, err
	}
	s.client = client
	if err := s.checkBucket(ctx); err != nil {
		return nil, err
	}
	if cfg.Flavor == FlavorB2 || cfg.ConditionalWrites == ConditionalNone {
		// B2 has no conditional writes, and "none" declares none: probe
		// nothing.
		s.probed = make(chan struct{})
		close(s.probed)
		s.probeDone = s.probed
		s.stopProbe = func() {}
		s.logCaps(cfg.ConditionalWrites, "not probed")
		return s, nil
	}
	s.startProbe(ctx, cfg.ConditionalWrites)
	return s, nil
}

// startProbe runs the capability probe (two rounds of three PUTs)
// beside what the caller does next: reading the repository's config and
// key slot and deriving the key take longer, so over a network an open no
// longer waits for it. Capabilities waits for the probe; Put and Delete
// wait for it and fail with its error, so nothing is ever written before
// the capabilities are known, nor at all when the probe failed (a writer
// must not fall back to a weaker lock protocol than its peers use). Reads
// do not wait. Close stops the probe and waits for it to clean up.
func (s *Store) startProbe(ctx context.Context, setting ConditionalWrites) {
	s.probed = make(chan struct{})
	s.probeDone = make(chan struct{})
	// The probe outlives Open's context (a caller may open with a short
	// one); Close cancels it.
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopProbe = cancel
	go func() {
		defer close(s.probeDone)
		probed, cleanup, err := s.probe(pctx)
		if err != nil {
			s.probeErr = fmt.Errorf("s3: probing %s: %w", s.Describe(), err)
		} else {
			s.caps = setting.limit(probed)
			s.logCaps(setting, fmt.Sprintf("probe found create-if-absent %v, compare-and-swap %v",
				probed.CreateIfAbsent, probed.CompareAndSwap))
		}
		close(s.probed)
		// The probe keys are deleted after the result is out: writes that
		// waited for it go on meanwhile (a round trip less before the
		// lock's first write).
		if cleanup != nil {
			cleanup()
		}
	}()
}

// awaitProbe waits for the capability probe and returns its error.
func (s *Store) awaitProbe(ctx context.Context) error {
	select {
	case <-s.probed:
		return s.probeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logCaps tells -debug which capabilities the store declares and why.
func (s *Store) logCaps(setting ConditionalWrites, why string) {
	if s.logf != nil {
		s.logf("s3: %s declares create-if-absent %v, compare-and-swap %v (conditional writes %s; %s)",
			s.Describe(), s.caps.CreateIfAbsent, s.caps.CompareAndSwap, setting, why)
	}
}

// newClient builds the SDK client: retries within Config.RetryTimeout
// (none after a timeout: see retryer), connect and response deadlines,
// MaxConnsPerHost = MaxConnections, and the request-logging middleware.
func (s *Store) newClient(ctx context.Context, cfg Config, extra []func(*s3.Options)) (*s3.Client, error) {
	region, endpoint := cfg.Region, cfg.Endpoint
	if cfg.Flavor == FlavorB2 {
		if region == "" {
			region = defaultB2Region
		}
		if endpoint == "" {
			endpoint = "https://s3." + region + ".backblazeb2.com"
		}
	}
	if region == "" {
		region = defaultRegion
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = cfg.ConnectTimeout }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxConnsPerHost = cfg.MaxConnections
			tr.MaxIdleConnsPerHost = cfg.MaxConnections
			tr.TLSHandshakeTimeout = cfg.ConnectTimeout
			// A server that accepted the request but never answers
			// fails the request after this long.
			tr.ResponseHeaderTimeout = cfg.ResponseTimeout
		})
	awsCfg, err := awsconf.Load(ctx, awsconf.Options{
		Region:     region,
		Profile:    cfg.Profile,
		AccessKey:  cfg.AccessKey,
		SecretKey:  cfg.SecretKey,
		HTTPClient: httpClient,
		Retryer:    func() aws.Retryer { return newRetryer(s.retry, cfg.notef()) },
		Logf:       cfg.Logf,
	})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	// The loaded config's client carries settings such as AWS_CA_BUNDLE;
	// take its transport so that Close can release its connections.
	bc, ok := awsCfg.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		return nil, fmt.Errorf("s3: unexpected HTTP client type %T", awsCfg.HTTPClient)
	}
	s.transport = bc.GetTransport()
	awsCfg.HTTPClient = &http.Client{
		Transport: s.transport,
		// S3 redirects (wrong region) are errors to report, not to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	clientOpts := []func(*s3.Options){
		func(o *s3.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
				o.UsePathStyle = true
			}
			if cfg.Flavor == FlavorB2 {
				// B2 rejects some of the newer default checksum headers.
				o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
				o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
			}
			// Skipped checksum validation (multipart objects, servers
			// that send none) is normal; don't print it on stderr.
			o.DisableLogOutputChecksumValidationSkipped = true
			o.APIOptions = append(o.APIOptions, s.addRequestMiddleware, s.addRetryBudget)
		},
	}
	return s3.NewFromConfig(awsCfg, append(clientOpts, extra...)...), nil
}

// checkBucket verifies that the bucket exists and the credentials work. It
// lists (at most one key) rather than HEADs the bucket: a HEAD answer has no
// body, so an error code telling "no such bucket" from "no such user" (some
// servers answer 404 for an unknown access key) would be lost.
func (s *Store) checkBucket(ctx context.Context) error {
	// A wrong endpoint is reported at once, not after RetryTimeout.
	ctx = briefRetries(ctx)
	err := s.withSlot(ctx, func() error {
		_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix), MaxKeys: aws.Int32(1),
		})
		return err
	})
	switch {
	case err == nil:
		return nil
	case isAccessDenied(err):
		return fmt.Errorf("s3: %w (bucket %s)", ErrAccessDenied, s.bucket)
	case isNotFound(err):
		return fmt.Errorf("s3: bucket %s: %w", s.bucket, ErrBucketNotFound)
	default:
		return fmt.Errorf("s3: cannot reach bucket %s: %w", s.bucket, err)
	}
}

// Describe names the store: "s3:bucket/prefix" or "b2:bucket/prefix".
func (s *Store) Describe() string {
	scheme := "s3"
	if s.flavor == FlavorB2 {
		scheme = "b2"
	}
	return scheme + ":" + s.bucket + "/" + s.prefix[:max(len(s.prefix)-1, 0)]
}

// RequestCost declares a bucket across a network's:
// store.RemoteRequestCost.
func (s *Store) RequestCost() int64 { return store.RemoteRequestCost }

// Stats returns the number of HTTP requests sent (retries included) and the
// bytes of request and response bodies.
func (s *Store) Stats() (requests, bytesUp, bytesDown int64) {
	return s.requests.Load(), s.bytesUp.Load(), s.bytesDown.Load()
}

// Capabilities reports the conditional writes found by the probe Open
// started, limited by Config.ConditionalWrites; it waits for the probe to
// finish. After a failed probe it reports none, and every write fails
// with the probe's error.
func (s *Store) Capabilities() store.Capabilities {
	<-s.probed
	return s.caps
}

// Close stops the capability probe if it still runs, waits for it to
// delete its keys, and releases idle connections.
func (s *Store) Close() error {
	s.stopProbe()
	<-s.probeDone
	s.transport.CloseIdleConnections()
	return nil
}

// full returns the object key for a store key.
func (s *Store) full(key string) string { return s.prefix + key }

// withSlot runs fn holding one of the MaxConnections request slots.
func (s *Store) withSlot(ctx context.Context, fn func() error) error {
	release, err := s.acquireSlot(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.timeoutErr(ctx, fn())
}

// acquireSlot takes one of the MaxConnections request slots, waiting for
// one while ctx lasts, for a caller that holds it beyond one call (a
// stream of a response body: OpenRange). release gives it back; it must
// be called exactly once.
func (s *Store) acquireSlot(ctx context.Context) (release func(), _ error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return func() { <-s.sem }, nil
}

// timeoutErr says which deadline a request that timed out (not by ctx's
// end) ran into: store.ErrTimeout, with the configured timeouts.
func (s *Store) timeoutErr(ctx context.Context, err error) error {
	if isTimeout(err) && ctx.Err() == nil {
		return fmt.Errorf("%w (connect timeout %v, response timeout %v): %w", store.ErrTimeout, s.connectTimeout, s.responseTimeout, err)
	}
	return err
}
