package rules

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxSchematicIDLength is a real schematic ID's length, which the XRDs
// carry as maxLength; it keeps a golden name well inside the
// 253-character DataVolume name limit with room for the version.
const MaxSchematicIDLength = 64

// SchematicIDPattern is the shape of a schematic ID, shared with the XRDs. A
// real schematic ID is 64 lowercase hex characters; the pattern is the wider
// DNS-label shape so that test and mirror schematics also pass, and nothing
// else can: the ID is interpolated into the golden's name, the disk URL and
// the installer image.
const SchematicIDPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`

var schematicID = regexp.MustCompile(SchematicIDPattern)

// SchematicID checks an Image Factory schematic ID.
func SchematicID(path *field.Path, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(path, "set an Image Factory schematic ID (64 lowercase hex characters)")}
	case !schematicID.MatchString(v):
		return field.ErrorList{field.Invalid(path, Quoted(v), "is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns")}
	case len(v) > MaxSchematicIDLength:
		return field.ErrorList{tooLong(path, v, MaxSchematicIDLength, "an Image Factory schematic ID is 64 lowercase hex characters")}
	}
	return nil
}
