package rules

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BlockSizes are the sector sizes a system disk may present: the 512-byte
// and 4K sectors disks and replicated storage have. 0 is omitted (default).
var BlockSizes = []int32{512, 4096}

// BlockSize checks a disk's logical and physical sector sizes at path (the
// blockSize object): each one of BlockSizes or 0 (omitted), and logical no
// larger than physical, since a physical sector holds whole logical ones.
func BlockSize(path *field.Path, logical, physical int32) field.ErrorList {
	var errs field.ErrorList
	for _, s := range []struct {
		name string
		v    int32
	}{{"logical", logical}, {"physical", physical}} {
		if s.v != 0 && s.v != BlockSizes[0] && s.v != BlockSizes[1] {
			errs = append(errs, field.NotSupported(path.Child(s.name), s.v, []string{"512", "4096"}))
		}
	}
	if len(errs) == 0 && logical != 0 && physical != 0 && logical > physical {
		errs = append(errs, field.Invalid(path.Child("logical"), logical, fmt.Sprintf("is larger than physical (%d); a physical sector holds whole logical sectors, so set logical 512 or physical 4096", physical)))
	}
	return errs
}
