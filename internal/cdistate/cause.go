package cdistate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cozystack/function-worker-image/internal/redact"
)

// Cause is why an import needs someone to act, read from what CDI's
// importer reports: the termination message that cmd/cdi-importer writes
// (importer.go errorCannotConnectDataSource, "Unable to connect to http data
// source: ..."; handleImport, "Unable to process data: ..."), which the
// import controller copies into the Running condition
// (pkg/controller/util.go setAnnotationsFromPodWithPrefix), and the
// kubelet's reason for a container it cannot create. Every text is CDI
// v1.65.0's or the Go standard library's that CDI's HTTP client wraps
// (pkg/importer/http-datasource.go createHTTPClient, createHTTPReader).
type Cause string

// The causes, each with its own fix (GoldenFix).
const (
	// CauseNone: nothing to say beyond the state (importing, succeeded, or
	// a failure this package does not recognise).
	CauseNone Cause = ""
	// CauseUntrustedCertificate: TLS verification failed because no CA the
	// importer trusts signed the server's certificate (crypto/x509
	// UnknownAuthorityError: "x509: certificate signed by unknown
	// authority"). The importer trusts the system pool plus every file of
	// the certConfigMap (http-datasource.go getCerts).
	CauseUntrustedCertificate Cause = "UntrustedCertificate"
	// CauseInvalidCertificate: the certificate is trusted but not valid for
	// this use: another host name (x509.HostnameError, "x509: certificate
	// is valid for ..."), expired or not yet valid (x509.CertificateInvalidError).
	CauseInvalidCertificate Cause = "InvalidCertificate"
	// CauseUnauthorized: the server answers 401 or 403
	// (http-datasource.go createHTTPReader, "expected status code 200, got
	// 401. Status: 401 Unauthorized").
	CauseUnauthorized Cause = "Unauthorized"
	// CauseImageNotFound: the server answers 404 or 410: it has no image at
	// that path (an Enterprise or self-hosted factory serves only the
	// schematics it stores).
	CauseImageNotFound Cause = "ImageNotFound"
	// CauseSourceRefused: any other 4xx but 408 and 429, which a retry can
	// clear.
	CauseSourceRefused Cause = "SourceRefused"
	// CauseUnresolvable: the factory's host name does not resolve
	// (net.DNSError: "lookup <host> ...: no such host", "server misbehaving").
	CauseUnresolvable Cause = "Unresolvable"
	// CauseUnreachable: no connection to the server, or it went silent
	// (connection refused or reset, no route, network unreachable, i/o
	// timeout, the client's deadline).
	CauseUnreachable Cause = "Unreachable"
	// CauseChecksumMismatch: the image does not match source.http.checksum;
	// CDI fails the DataVolume for good (import-controller.go
	// updatePvcFromPod, reason ChecksumError).
	CauseChecksumMismatch Cause = "ChecksumMismatch"
	// CauseTooSmall: the image does not fit the volume (util.go
	// simplifyKnownMessage, MessageTooSmall).
	CauseTooSmall Cause = "TooSmall"
	// CauseCredentialsMissing: the importer container cannot be created
	// because the Secret source.http.secretRef names, or one of its keys
	// accessKeyId and secretKey, does not exist (the import controller
	// passes them as secretKeyRef environment variables,
	// import-controller.go makeImportEnv; the kubelet reports
	// CreateContainerConfigError, "secret \"x\" not found").
	CauseCredentialsMissing Cause = "CredentialsMissing"
)

// ReasonCreateContainerConfigError is the kubelet's waiting reason for a
// container whose environment or mounts name something missing; CDI copies it
// into Running=False (util.go setAnnotationsFromPodWithPrefix).
const ReasonCreateContainerConfigError = "CreateContainerConfigError"

// Cause says why a state that needs action needs it; CauseNone for a
// state that does not, or a failure this package does not recognise.
func (s State) Cause() Cause {
	switch {
	case s.Kind == Failed && s.Reason == ReasonChecksumError:
		return CauseChecksumMismatch
	case s.Kind == Permanent && s.Message == MessageTooSmall:
		return CauseTooSmall
	case s.Kind == Failing && s.Reason == ReasonCreateContainerConfigError:
		if strings.Contains(s.Message, "ecret") {
			return CauseCredentialsMissing
		}
		return CauseNone
	case s.Kind != Failing || s.Reason != ReasonError:
		return CauseNone
	}
	return causeOfMessage(s.Message)
}

// causeOfMessage classifies an importer's error text. Order matters: a DNS
// failure also reads "dial tcp", and a TLS error may mention a timeout.
func causeOfMessage(msg string) Cause {
	if m := refusedStatus.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1])
		switch {
		case code == 401 || code == 403:
			return CauseUnauthorized
		case code == 404 || code == 410:
			return CauseImageNotFound
		case code >= 400 && code <= 499 && code != 408 && code != 429:
			return CauseSourceRefused
		}
		return CauseNone
	}
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(msg, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case has("x509: certificate signed by unknown authority", "certificate is not trusted"):
		return CauseUntrustedCertificate
	case has("x509: certificate is valid for", "x509: certificate is not valid for any names", "x509: certificate has expired or is not yet valid", "tls: failed to verify certificate"):
		return CauseInvalidCertificate
	case has("no such host", "server misbehaving", "lookup "):
		return CauseUnresolvable
	case has("connection refused", "connection reset by peer", "no route to host", "network is unreachable", "i/o timeout", "context deadline exceeded", "Client.Timeout exceeded", "TLS handshake timeout"):
		return CauseUnreachable
	}
	return CauseNone
}

// Golden is what a fix for a golden's import names: where its catalog entry
// is, and what it imports.
type Golden struct {
	// Entry is the catalog field path of its entry, "images[2]"; empty
	// where the caller does not know it (a pool), which then names the
	// entry by its image.
	Entry string
	// Namespace and Name are the golden DataVolume's.
	Namespace            string
	Name                 string
	URL                  string
	SchematicID, Version string
	// CertConfigMap, SecretRef and SecretExtraHeaders are what its import
	// was made with.
	CertConfigMap      string
	SecretRef          string
	SecretExtraHeaders []string
}

// entry names a field of the golden's catalog entry.
func (g Golden) entry(field string) string {
	if g.Entry == "" {
		return fmt.Sprintf("the %s of the XWorkerImageCatalog entry for schematicID %s, version %s", field, g.SchematicID, g.Version)
	}
	return g.Entry + "." + field
}

// host is the URL's scheme and authority, for messages.
func (g Golden) host() string {
	u := redact.Text(g.URL)
	i := strings.Index(u, "://")
	if i < 0 {
		return "the Image Factory"
	}
	if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
		return u[:i+3+j]
	}
	return u
}

// imagePath is the path the golden's image is asked at.
func (g Golden) imagePath() string {
	u := redact.Text(g.URL)
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
			return u[i+3+j:]
		}
	}
	return "/image/" + g.SchematicID + "/" + g.Version + "/"
}

// recreated is how a golden that never succeeded gets a changed import:
// the catalog re-creates it (internal/catalog settle.go).
const recreated = "the catalog re-creates a golden that never succeeded and that nothing clones once its import would be made otherwise, so the change applies without deleting anything by hand"

// GoldenFix is the fix of a golden's import failing for cause, in the
// catalog's fields; empty for CauseNone.
func GoldenFix(c Cause, g Golden) string {
	switch c {
	case CauseUntrustedCertificate:
		if g.CertConfigMap != "" {
			return fmt.Sprintf("CDI's importer does not trust the certificate %s presents, although it trusts the CA bundle in ConfigMap %s/%s: set the catalog's spec.imageFactoryCA (or the function Input's talos.imageFactoryCA) to the PEM bundle of the CA that signed it; the ConfigMap is updated in place and the importer reads it on its next start, which CDI makes by itself", g.host(), g.Namespace, g.CertConfigMap)
		}
		return fmt.Sprintf("CDI's importer does not trust the certificate %s presents: set the catalog's spec.imageFactoryCA (or the function Input's talos.imageFactoryCA) to the PEM bundle of the CA that signed it; %s", g.host(), recreated)
	case CauseInvalidCertificate:
		return fmt.Sprintf("the certificate %s presents is not valid for it (issued for another host name, expired, or not yet valid): renew the server's certificate, or point %s (or the catalog's spec.imageFactoryURL) at the host it is issued for; %s", g.host(), g.entry("imageFactoryURL"), recreated)
	case CauseUnauthorized:
		have := "the import sends no credentials"
		if g.SecretRef != "" || len(g.SecretExtraHeaders) > 0 {
			have = fmt.Sprintf("it refuses the credentials in %s", secretsOf(g))
		}
		return fmt.Sprintf("%s asks for credentials and %s: name Secrets in namespace %s it accepts in the catalog's spec.imageFactoryAuth (secretRef, with keys accessKeyId and secretKey for basic authentication; secretExtraHeaders, each value a header line such as \"Authorization: Bearer <token>\"), or correct their data, which the importer reads on its next start; %s", g.host(), have, g.Namespace, recreated)
	case CauseImageNotFound:
		return fmt.Sprintf("%s serves no image at %s: check that this factory has schematicID %s and Talos %s (an Enterprise or self-hosted factory serves only the schematics it stores, so the public default schematic may not exist there) and correct %s, or point %s at a factory or mirror that serves it; %s", g.host(), g.imagePath(), g.SchematicID, g.Version, g.entry("schematicID or version"), g.entry("imageFactoryURL"), recreated)
	case CauseSourceRefused:
		return fmt.Sprintf("%s refuses the request: check the factory's logs and %s; %s", g.host(), g.entry("imageFactoryURL"), recreated)
	case CauseUnresolvable:
		return fmt.Sprintf("the host of %s does not resolve from the importer pods in namespace %s: correct %s (or the catalog's spec.imageFactoryURL), or the cluster's DNS; CDI retries by itself and the import resumes once the name resolves", g.host(), g.Namespace, g.entry("imageFactoryURL"))
	case CauseUnreachable:
		return fmt.Sprintf("the importer pods in namespace %s cannot reach %s (refused, reset or timed out): check the network policies and egress of namespace %s, a proxy (CDIConfig spec.importProxy), and that the factory is up, or switch the catalog's spec.imageFactoryURL to a mirror you can reach; CDI retries by itself and the import resumes once an attempt connects", g.Namespace, g.host(), g.Namespace)
	case CauseChecksumMismatch:
		return fmt.Sprintf("the image %s serves does not match %s, and CDI fails such an import for good and deletes what it downloaded: correct the checksum (the factory's builds are not reproducible across versions of it, so take the digest from the factory you import from), or the factory; %s", g.host(), g.entry("checksum"), recreated)
	case CauseTooSmall:
		return fmt.Sprintf("the Talos image does not fit the golden's volume: raise %s (or the catalog's spec.storage); %s", g.entry("storage"), recreated)
	case CauseCredentialsMissing:
		return fmt.Sprintf("CDI's importer cannot start: Secret %s named by the catalog's spec.imageFactoryAuth.secretRef does not exist in namespace %s or lacks a key (accessKeyId, secretKey): create it; the importer starts by itself once it exists", g.SecretRef, g.Namespace)
	}
	return ""
}

// secretsOf names the Secrets a golden's import authenticates with.
func secretsOf(g Golden) string {
	var names []string
	if g.SecretRef != "" {
		names = append(names, "Secret "+g.SecretRef+" (secretRef)")
	}
	for _, h := range g.SecretExtraHeaders {
		names = append(names, "Secret "+h+" (secretExtraHeaders)")
	}
	return strings.Join(names, ", ")
}
