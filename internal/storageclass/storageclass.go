// Package storageclass decides which StorageClass a disk that names none
// lands on today. CDI binds a kubevirt-content DataVolume without a class to
// the virtualization default first and to the Kubernetes default otherwise, so
// the clone gate must resolve an empty class the same way before it compares
// a pool's class with its golden's.
package storageclass

import (
	storagev1 "k8s.io/api/storage/v1"
)

// Default-class annotations, strongest first.
const (
	// AnnVirtDefault marks the virtualization default class; CDI prefers it
	// for VM disks.
	AnnVirtDefault = "storageclass.kubevirt.io/is-default-virt-class"
	// AnnDefault is the Kubernetes (GA) default-class annotation.
	AnnDefault = "storageclass.kubernetes.io/is-default-class"
	// AnnBetaDefault is the deprecated beta default-class annotation.
	AnnBetaDefault = "storageclass.beta.kubernetes.io/is-default-class"
)

// Choice is the class a disk without one binds to, and the annotation that
// made it the default. Both are empty when no class is marked default.
type Choice struct {
	Name       string
	Annotation string
}

// Default returns the newest class marked as the virtualization default,
// else the newest GA default, else the newest beta-only default. Only the
// exact value "true" counts. A class carrying the GA annotation is never
// judged by its beta one, and a beta-only class never displaces a GA
// default, because CDI reads only the GA annotation. Equal creation times
// fall back to name order so that the answer never depends on list order.
func Default(classes []storagev1.StorageClass) Choice {
	for _, ann := range []string{AnnVirtDefault, AnnDefault, AnnBetaDefault} {
		var best *storagev1.StorageClass
		for i := range classes {
			sc := &classes[i]
			if sc.Annotations[ann] != "true" {
				continue
			}
			if ann == AnnBetaDefault {
				if _, ga := sc.Annotations[AnnDefault]; ga {
					continue
				}
			}
			if best == nil || newer(sc, best) {
				best = sc
			}
		}
		if best != nil {
			return Choice{Name: best.Name, Annotation: ann}
		}
	}
	return Choice{}
}

// newer reports whether a was created after b; equal times prefer the
// lexically smaller name.
func newer(a, b *storagev1.StorageClass) bool {
	at, bt := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !at.Equal(bt) {
		return at.After(bt)
	}
	return a.Name < b.Name
}
