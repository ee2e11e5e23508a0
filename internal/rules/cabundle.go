package rules

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// privateKey is any PEM private key header (RSA, EC, PKCS#8, encrypted).
var privateKey = regexp.MustCompile(`(?i)-----BEGIN [A-Z0-9 ]*PRIVATE KEY`)

// CABundle checks a CA bundle in PEM (the Image Factory CA CDI verifies the
// factory against) and returns it trimmed. The cozystack chart's guards
// (packages/apps/kubernetes/templates/_helpers.tpl, kubernetes.talosImageFactoryCA
// @5bb2dd5): private key material is refused, since the bundle is published
// in a ConfigMap anything that reads the namespace can read, and the value
// must be complete CERTIFICATE blocks and nothing else. Unlike the chart,
// which has no x509 parser, each block must parse as a certificate: CDI
// would otherwise add nothing and fail verification at import time. A
// value of only whitespace is no bundle (""), as in the chart.
func CABundle(path *field.Path, v string) (string, field.ErrorList) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if privateKey.MatchString(v) {
		return "", field.ErrorList{field.Invalid(path, field.OmitValueType{}, "must not contain private key material: it is published in a ConfigMap that anything able to read the namespace can read; give only the CA certificate(s)")}
	}
	rest := []byte(v)
	for n := 1; ; n++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil || b.Type != "CERTIFICATE" {
			return "", field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("must be one or more complete PEM certificate blocks (BEGIN/END CERTIFICATE) and nothing else; block %d is not one", n))}
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return "", field.ErrorList{field.Invalid(path, field.OmitValueType{}, fmt.Sprintf("certificate %d does not parse (%v); give the CA certificate in PEM", n, err))}
		}
		if strings.TrimSpace(string(rest)) == "" {
			return v, nil
		}
	}
}
