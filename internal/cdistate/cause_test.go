package cdistate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// The importer's termination messages, as cmd/cdi-importer/importer.go
// errorCannotConnectDataSource writes them (v1.65.0) around the errors of Go's
// HTTP client that pkg/importer/http-datasource.go wraps.
const (
	msgUntrusted = `Unable to connect to http data source: HTTP request errored: Get "https://factory.internal/image/a/v1.0.0/openstack-amd64.raw.xz": tls: failed to verify certificate: x509: certificate signed by unknown authority`
	msgHostname  = `Unable to connect to http data source: HTTP request errored: Get "https://10.0.0.5/image/a": tls: failed to verify certificate: x509: certificate is valid for factory.internal, not 10.0.0.5`
	msgExpired   = `Unable to connect to http data source: HTTP request errored: Get "https://factory.internal/x": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-12-03T00:00:00Z is after 2026-01-01T00:00:00Z`
	msg401       = "Unable to connect to http data source: expected status code 200, got 401. Status: 401 Unauthorized"
	msg403       = "Unable to connect to http data source: expected status code 200, got 403. Status: 403 Forbidden"
	msg400       = "Unable to connect to http data source: expected status code 200, got 400. Status: 400 Bad Request"
	msg429       = "Unable to connect to http data source: expected status code 200, got 429. Status: 429 Too Many Requests"
	msgDNS       = `Unable to connect to http data source: HTTP request errored: Get "https://factory.mirror.internal/x": dial tcp: lookup factory.mirror.internal on 10.96.0.10:53: no such host`
	msgRefused   = `Unable to connect to http data source: HTTP request errored: Get "https://factory.internal/x": dial tcp 10.0.0.5:443: connect: connection refused`
	msgTimeout   = `Unable to connect to http data source: HTTP request errored: Get "https://factory.internal/x": dial tcp 10.0.0.5:443: i/o timeout`
	msgChecksum  = "Unable to process data: checksum validation failed: checksum mismatch: expected sha256:00, calculated sha256:11"
	msgNoSecret  = `secret "factory-auth" not found`
	// msgChecksumScratch is the termination message the real importer
	// wrote in the e2e suite (test/e2e scenario_importer_test.go,
	// checksum-mismatch): an image it cannot stream goes through scratch
	// space, whose transfer wraps the error once more
	// (pkg/importer/data-processor.go ProcessDataWithPause, v1.65.0); CDI
	// copies it into Running with reason ChecksumError.
	msgChecksumScratch = "Unable to process data: Unable to transfer source data to scratch space: checksum validation failed: checksum mismatch: expected sha256:0f0f, calculated sha256:ede0"
)

func TestCause(t *testing.T) {
	failing := func(reason, msg string) State {
		return State{Kind: Failing, Reason: reason, Message: msg, Restarts: 3}
	}
	cases := map[string]struct {
		reason string
		state  State
		want   Cause
	}{
		"UntrustedCertificate":        {"No trusted CA signed the server's certificate.", failing(ReasonError, msgUntrusted), CauseUntrustedCertificate},
		"HostnameMismatch":            {"A trusted certificate for another host.", failing(ReasonError, msgHostname), CauseInvalidCertificate},
		"Expired":                     {"An expired certificate.", failing(ReasonError, msgExpired), CauseInvalidCertificate},
		"Unauthorized":                {"401 asks for credentials.", failing(ReasonError, msg401), CauseUnauthorized},
		"Forbidden":                   {"403 refuses the credentials given.", failing(ReasonError, msg403), CauseUnauthorized},
		"NotFound":                    {"404: no such image on that factory.", failing(ReasonError, notFound404), CauseImageNotFound},
		"OtherClientError":            {"Any other 4xx.", failing(ReasonError, msg400), CauseSourceRefused},
		"RateLimitIsNoCause":          {"429 clears by itself.", failing(ReasonError, msg429), CauseNone},
		"DNS":                         {"The host does not resolve.", failing(ReasonError, msgDNS), CauseUnresolvable},
		"ConnectionRefused":           {"Nothing listens.", failing(ReasonError, msgRefused), CauseUnreachable},
		"Timeout":                     {"The connection times out.", failing(ReasonError, msgTimeout), CauseUnreachable},
		"Checksum":                    {"CDI fails the import for good.", State{Kind: Failed, Reason: ReasonChecksumError, Message: msgChecksum}, CauseChecksumMismatch},
		"ChecksumThroughScratch":      {"The same through scratch space.", State{Kind: Failed, Reason: ReasonChecksumError, Message: msgChecksumScratch}, CauseChecksumMismatch},
		"TooSmall":                    {"The image does not fit.", State{Kind: Permanent, Reason: ReasonError, Message: MessageTooSmall}, CauseTooSmall},
		"SecretMissing":               {"The kubelet cannot create the importer container.", failing(ReasonCreateContainerConfigError, msgNoSecret), CauseCredentialsMissing},
		"ConfigErrorWithoutSecret":    {"A config error that names no Secret is not the credentials'.", failing(ReasonCreateContainerConfigError, "something else"), CauseNone},
		"ImportingIsNoCause":          {"A blip before the restart loop says nothing yet.", State{Kind: Importing, Reason: ReasonError, Message: msgUntrusted}, CauseNone},
		"UnknownFailureIsNoCause":     {"A failure this package does not know keeps the generic text.", failing(ReasonError, "Unable to process data: something odd"), CauseNone},
		"SucceededIsNoCause":          {"Nothing to act on.", State{Kind: Succeeded}, CauseNone},
		"DNSTimeoutIsUnresolvable":    {"A lookup that times out is DNS, not the factory.", failing(ReasonError, `Get "https://f/x": dial tcp: lookup f on 10.96.0.10:53: read udp: i/o timeout`), CauseUnresolvable},
		"ImagePullFailedHasOwnRemedy": {"A CDI image that cannot be pulled is CDI's.", failing(ReasonImagePullFailed, "failed to pull image"), CauseNone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.state.Cause()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestMissingSecretIsFailing(t *testing.T) {
	d := dv(cdiv1.ImportScheduled, "", 0, cond(running, isFalse, ReasonCreateContainerConfigError, msgNoSecret))
	got := Of(d, nil)
	if got.Kind != Failing || got.Cause() != CauseCredentialsMissing {
		t.Errorf("an importer the kubelet cannot create for want of its Secret waits until someone creates it: got kind %s, cause %q", got.Kind, got.Cause())
	}
}

func TestGoldenFixNamesTheFieldAndNeverTheCredential(t *testing.T) {
	g := Golden{Entry: "images[1]", Namespace: "cozy-public", URL: "https://user:s3cr3t@factory.internal/image/a/v1.0.0/openstack-amd64.raw.xz", SchematicID: "a", Version: "v1.0.0", SecretRef: "factory-auth"}
	wants := map[Cause]string{
		CauseUntrustedCertificate: "spec.imageFactoryCA",
		CauseInvalidCertificate:   "images[1].imageFactoryURL",
		CauseUnauthorized:         "spec.imageFactoryAuth",
		CauseImageNotFound:        "images[1].schematicID or version",
		CauseSourceRefused:        "images[1].imageFactoryURL",
		CauseUnresolvable:         "images[1].imageFactoryURL",
		CauseUnreachable:          "spec.imageFactoryURL",
		CauseChecksumMismatch:     "images[1].checksum",
		CauseTooSmall:             "images[1].storage",
		CauseCredentialsMissing:   "Secret factory-auth",
	}
	for c, field := range wants {
		fix := GoldenFix(c, g)
		if !strings.Contains(fix, field) {
			t.Errorf("GoldenFix(%s) does not name %q: %s", c, field, fix)
		}
		if strings.Contains(fix, "s3cr3t") || strings.Contains(fix, "user:") {
			t.Errorf("GoldenFix(%s) echoes the URL's credential: %s", c, fix)
		}
	}
	if fix := GoldenFix(CauseNone, g); fix != "" {
		t.Errorf("GoldenFix(CauseNone) = %q, want none", fix)
	}
	if fix := GoldenFix(CauseImageNotFound, Golden{SchematicID: "a", Version: "v1.0.0", URL: "https://f/image/a/v1.0.0/x"}); !strings.Contains(fix, "XWorkerImageCatalog entry for schematicID a, version v1.0.0") {
		t.Errorf("a pool's fix names the entry by its image: %s", fix)
	}
}
