package rules

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ChecksumPattern is an image digest CDI's importer verifies
// (source.http.checksum, CDI v1.65.0 pkg/importer/checksum.go
// NewChecksumValidator: "algorithm:hash", lowercase hex). Only the two
// algorithms fit to pin an image by are taken: CDI also knows md5 and sha1.
const ChecksumPattern = `^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$`

var checksum = regexp.MustCompile(ChecksumPattern)

// Checksum checks a catalog entry's checksum; empty is none.
func Checksum(path *field.Path, v string) field.ErrorList {
	if v == "" || checksum.MatchString(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, Quoted(v), "is not sha256:<64 lowercase hex digits> or sha512:<128 lowercase hex digits>, the image digest CDI's importer verifies (md5 and sha1 are refused: too weak to pin an image by)")}
}
