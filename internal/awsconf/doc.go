// Package awsconf loads the aws-sdk-go-v2 configuration that every AWS
// client of cloudstic (the S3 store, the KMS key slots) shares: the SDK's
// own log lines go to the caller's debug log or nowhere, never to stderr;
// the EC2 instance-metadata credential probe is bounded so hosts outside
// EC2 do not wait seconds for it; and a credential chain that finds nothing
// is reported as ErrNoCredentials before the first request, naming the
// sources it tried.
package awsconf
