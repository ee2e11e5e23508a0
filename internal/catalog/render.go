package catalog

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/labels"
)

// goldenDataVolume is the desired golden: an HTTP import of the Talos disk
// image, bound immediately (it has no consumer), built from scratch so the
// desired state carries only what the function has an opinion on.
func goldenDataVolume(g Golden) *cdiv1.DataVolume {
	dv := &cdiv1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:      g.Name,
			Namespace: g.Namespace,
			Labels:    labels.OfGolden(g.Namespace, g.Name),
			Annotations: map[string]string{
				labels.AnnCDIBindImmediate: "true",
				labels.AnnGolden:           labels.GoldenRef(g.Namespace, g.Name),
				labels.AnnSchematicID:      g.SchematicID,
				labels.AnnTalosVersion:     g.Version,
			},
		},
		Spec: cdiv1.DataVolumeSpec{
			Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{
				URL:                g.URL,
				CertConfigMap:      g.Import.CertConfigMap,
				SecretRef:          g.Import.SecretRef,
				SecretExtraHeaders: g.Import.SecretExtraHeaders,
				Checksum:           g.Import.Checksum,
			}},
			ContentType: cdiv1.DataVolumeKubeVirt,
			Storage: &cdiv1.StorageSpec{
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: g.Storage},
				},
			},
		},
	}
	if g.StorageClass != "" {
		class := g.StorageClass
		dv.Spec.Storage.StorageClassName = &class
	}
	return dv
}
