package schema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cozystack/function-worker-image/internal/defaults"
)

const (
	nodePoolHead = `
apiVersion: workerimage.cozystack.io/v1alpha1
kind: XNodePool
metadata: {name: acme-workers, namespace: tenant-acme}
`
	tenantHead = `
apiVersion: workerimage.cozystack.io/v1alpha1
kind: XTenantCluster
metadata: {name: acme, namespace: tenant-acme}
`
	catalogHead = `
apiVersion: workerimage.cozystack.io/v1alpha1
kind: XWorkerImageCatalog
metadata: {name: platform}
`
	claimHead = `
apiVersion: workerimage.cozystack.io/v1alpha1
kind: NodePool
metadata: {name: acme-workers, namespace: tenant-acme}
`
	schematic = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
)

// TestSchemasAcceptAndReject runs creates and updates through the shipped
// schemas: OpenAPI types, patterns and enums, list-map keys, and the CEL rules
// (including transition rules, which only run on update). want lists
// substrings of the expected error; none means the request is admitted.
func TestSchemasAcceptAndReject(t *testing.T) {
	cases := map[string]struct {
		reason string
		dir    string
		old    string
		obj    string
		want   []string
	}{
		// Issue 12: labels, taints, GPUs, kernel modules, kubelet.
		"NodePoolWithLabelsTaintsGPUsModulesKubeletIsAdmitted": {
			reason: "The chart's examples: labels, a value:effect taint and an effect-only one, an NVIDIA GPU, explicit modules with parameters, kubelet overrides.",
			obj: nodePoolHead + `spec: {clusterName: acme, resources: {cpu: "8", memory: 16Gi},
  labels: {workload: batch, example.com/tier: gold, empty: ""},
  taints: [{key: dedicated, value: batch, effect: NoSchedule}, {key: example.com/spot, effect: PreferNoSchedule}],
  gpus: [{name: nvidia.com/GB202_RTX_PRO_6000}],
  kernelModules: [{name: nvidia, parameters: ["NVreg_RegistryDwords=PowerMizerEnable=0x1;PerfLevelSrc=0x2222"]}, {name: nvidia_uvm}],
  kubelet: {systemReservedMemory: 512Mi, kubeReservedCpu: 100m, evictionHardMemory: 5%, evictionSoftMemory: 8.5%}}`,
		},
		"NodePoolWithEmptyKernelModulesIsAdmitted": {
			reason: "[] opts a GPU pool out of the NVIDIA modules.",
			obj:    nodePoolHead + `spec: {clusterName: acme, gpus: [{name: nvidia.com/AD102GL_L40S}], kernelModules: []}`,
		},
		"NodePoolWithBadLabelKeyIsRejected": {
			reason: "The chart refuses \"bad key\" (node_labels_taints_test.yaml@27f0283).",
			obj:    nodePoolHead + `spec: {clusterName: acme, labels: {"bad key": x}}`,
			want:   []string{"spec.labels", "labels keys must be label keys"},
		},
		"NodePoolWithShellLabelValueIsRejected": {
			reason: "The chart refuses $(id) as a label value.",
			obj:    nodePoolHead + `spec: {clusterName: acme, labels: {workload: "$(id)"}}`,
			want:   []string{"spec.labels.workload", "should match"},
		},
		"NodePoolWithGPULabelIsRejected": {
			reason: "gpu is the function's label (from gpus), as the chart's.",
			obj:    nodePoolHead + `spec: {clusterName: acme, labels: {gpu: "off"}}`,
			want:   []string{"managed by the function"},
		},
		"NodePoolWithNodeRoleLabelIsRejected": {
			reason: "node-role labels come from roles.",
			obj:    nodePoolHead + `spec: {clusterName: acme, labels: {node-role.kubernetes.io/ingress-nginx: ""}}`,
			want:   []string{"managed by the function"},
		},
		"NodePoolWithBacktickTaintKeyIsRejected": {
			reason: "The chart refuses a backtick in a taint key.",
			obj:    nodePoolHead + "spec: {clusterName: acme, taints: [{key: \"a`b\", effect: NoSchedule}]}",
			want:   []string{"spec.taints[0].key", "should match"},
		},
		"NodePoolWithBadTaintEffectIsRejected": {
			reason: "Three effects exist.",
			obj:    nodePoolHead + `spec: {clusterName: acme, taints: [{key: dedicated, effect: NoRun}]}`,
			want:   []string{"spec.taints[0].effect", "Unsupported value"},
		},
		"NodePoolWithDuplicateTaintKeyIsRejected": {
			reason: "Talos keys nodeTaints by key: one taint per key.",
			obj:    nodePoolHead + `spec: {clusterName: acme, taints: [{key: dedicated, effect: NoSchedule}, {key: dedicated, effect: NoExecute}]}`,
			want:   []string{"spec.taints[1]", "Duplicate value"},
		},
		"NodePoolWithShellKernelModuleIsRejected": {
			reason: "The chart refuses nvidia$(id) (kernel_modules_test.yaml@c1ea547).",
			obj:    nodePoolHead + `spec: {clusterName: acme, kernelModules: [{name: "nvidia$(id)"}]}`,
			want:   []string{"spec.kernelModules[0].name", "should match"},
		},
		"NodePoolWithShellKernelParameterIsRejected": {
			reason: "The chart refuses $ in a module parameter.",
			obj:    nodePoolHead + `spec: {clusterName: acme, kernelModules: [{name: nvidia, parameters: ["x=$(id)"]}]}`,
			want:   []string{"spec.kernelModules[0].parameters[0]", "should match"},
		},
		"NodePoolWithExtraKernelModuleKeyIsRejected": {
			reason: "The chart drops an unvalidated extra key; the schema refuses it.",
			obj:    nodePoolHead + `spec: {clusterName: acme, kernelModules: [{name: dummy, evil: x}]}`,
			want:   []string{"spec.kernelModules[0].evil"},
		},
		"NodePoolWithBadGPUNameIsRejected": {
			reason: "A GPU is a device resource name.",
			obj:    nodePoolHead + `spec: {clusterName: acme, gpus: [{name: "nvidia.com/RTX 4090"}]}`,
			want:   []string{"spec.gpus[0].name", "should match"},
		},
		"NodePoolWithBadEvictionThresholdIsRejected": {
			reason: "An eviction threshold is a percentage or a quantity.",
			obj:    nodePoolHead + `spec: {clusterName: acme, kubelet: {evictionHardMemory: seven}}`,
			want:   []string{"spec.kubelet.evictionHardMemory", "should match"},
		},
		"NodePoolWithBadReservedCPUIsRejected": {
			reason: "A CPU quantity is not a word.",
			obj:    nodePoolHead + `spec: {clusterName: acme, kubelet: {systemReservedCpu: "one"}}`,
			want:   []string{"spec.kubelet.systemReservedCpu", "should match"},
		},
		"NodePoolWithNegativeQuantityIsRejected": {
			reason: "No size here is negative: Kubernetes' grammar without the minus sign.",
			obj:    nodePoolHead + `spec: {clusterName: acme, diskSize: "-20Gi"}`,
			want:   []string{"spec.diskSize", "should match"},
		},
		"NodePoolWithIntegerQuantitiesIsAdmitted": {
			reason: "Quantities are int-or-string, as in a Pod spec: the chart's values files write cpu: 4 unquoted.",
			obj: nodePoolHead + `spec: {clusterName: acme, resources: {cpu: 4, memory: 17179869184}, podCpuRequest: 1, podCpuLimit: 3,
  kubelet: {systemReservedCpu: 1}, ephemeralStorage: {limit: 2147483648}}`,
		},
		"NodePoolWithKubernetesSpellingsIsAdmitted": {
			reason: "Every spelling resource.ParseQuantity reads: a sign, an exponent, micro, a trailing dot.",
			obj:    nodePoolHead + `spec: {clusterName: acme, resources: {cpu: "+2", memory: "4.Gi"}, podCpuRequest: 100u, podCpuLimit: 1e1, diskSize: 2e10}`,
		},
		"NodePoolWithDecimalNumberIsRejected": {
			reason: "An int-or-string field takes no JSON float: write 0.5 quoted.",
			obj:    nodePoolHead + `spec: {clusterName: acme, podCpuLimit: 0.5}`,
			want:   []string{"spec.podCpuLimit"},
		},
		"TenantClusterPoolWithTaintsIsAdmitted": {
			reason: "A tenant cluster's pools carry the same shape.",
			obj:    tenantHead + `spec: {nodePools: {gpu: {gpus: [{name: nvidia.com/AD102GL_L40S}], taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}}}`,
		},
		"TenantClusterPoolWithGPULabelIsRejected": {
			reason: "The same rule at the pool's path in the tenant cluster.",
			obj:    tenantHead + `spec: {nodePools: {md0: {labels: {gpu: "on"}}}}`,
			want:   []string{"spec.nodePools[md0].labels", "managed by the function"},
		},
		"NodePoolWithBuiltinIsAdmitted": {
			reason: "builtin alone selects the clone path.",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {builtin: {version: v1.12.4}}}`,
		},
		"NodePoolWithBuiltinAndFactoryIsRejected": {
			reason: "builtin and factory are exclusive (PRODUCT decision 1); the schema says so before the function does.",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {builtin: {}, factory: {}}}`,
			want:   []string{"spec.osImage", "set at most one of builtin"},
		},
		"NodePoolWithBadTalosVersionIsRejected": {
			reason: "A Talos version is vMAJOR.MINOR.PATCH[-pre].",
			obj:    nodePoolHead + `spec: {clusterName: acme, talos: {version: "1.13.6"}}`,
			want:   []string{"spec.talos.version", "should match"},
		},
		"NodePoolWithMinorOnlyImageVersionIsRejected": {
			reason: "An osImage version needs the patch release: the golden name and the factory URL contain it.",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {factory: {version: v1.13}}}`,
			want:   []string{"spec.osImage.factory.version", "should match"},
		},
		"NodePoolWithPrereleaseVersionIsAdmitted": {
			reason: "Pre-releases are valid Talos versions.",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {builtin: {version: v1.14.0-alpha.1}}}`,
		},
		"NodePoolWithUppercaseSchematicIsRejected": {
			reason: "A schematic ID is a lowercase identifier; it becomes part of a DataVolume name.",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {builtin: {schematicID: CE4C}}}`,
			want:   []string{"spec.osImage.builtin.schematicID", "should match"},
		},
		"NodePoolWithoutClusterNameIsRejected": {
			reason: "A pool must say which Cluster API cluster it joins.",
			obj:    nodePoolHead + `spec: {replicas: 2}`,
			want:   []string{"spec.clusterName", "Required value"},
		},
		"NodePoolWithInstanceTypeAndResourcesIsRejected": {
			reason: "KubeVirt refuses a VM whose instance type and resources both size it.",
			obj:    nodePoolHead + `spec: {clusterName: acme, instanceType: u1.large, resources: {cpu: "2"}}`,
			want:   []string{"set either instanceType"},
		},
		"NodePoolWithBadDiskSizeIsRejected": {
			reason: "diskSize is a quantity.",
			obj:    nodePoolHead + `spec: {clusterName: acme, diskSize: 20 GB}`,
			want:   []string{"spec.diskSize", "should match"},
		},
		"NodePoolWithUnknownFieldIsRejected": {
			reason: "Strict field validation refuses what the schema does not know (a typo would otherwise vanish).",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {builtin: {url: "https://example.com"}}}`,
			want:   []string{"spec.osImage.builtin.url"},
		},
		"NodePoolInJoinModeIsAdmitted": {
			reason: "Join is the bootstrap mode of a Kamaji cluster.",
			obj:    nodePoolHead + `spec: {clusterName: acme, bootstrap: {mode: Join, factsRevision: 2}}`,
		},
		"NodePoolWithUnknownBootstrapModeIsRejected": {
			reason: "The mode is an enum; a lowercase join would otherwise generate.",
			obj:    nodePoolHead + `spec: {clusterName: acme, bootstrap: {mode: join}}`,
			want:   []string{"spec.bootstrap.mode", "Unsupported value"},
		},
		"NodePoolWithNegativeFactsRevisionIsRejected": {
			reason: "factsRevision is a counter.",
			obj:    nodePoolHead + `spec: {clusterName: acme, bootstrap: {mode: Join, factsRevision: -1}}`,
			want:   []string{"spec.bootstrap.factsRevision", "greater than or equal to 0"},
		},
		"TenantPoolWithUnknownBootstrapModeIsRejected": {
			reason: "A tenant cluster's pools carry the bootstrap mode too, with the same enum.",
			obj:    tenantHead + `spec: {nodePools: {gpu: {bootstrap: {mode: Kamaji}}}}`,
			want:   []string{"spec.nodePools.gpu.bootstrap.mode", "Unsupported value"},
		},
		"NodePoolWithNegativeReplicasIsRejected": {
			reason: "replicas cannot be negative.",
			obj:    nodePoolHead + `spec: {clusterName: acme, replicas: -1}`,
			want:   []string{"spec.replicas", "greater than or equal to 0"},
		},
		"NodePoolStorageClassChangeIsRejected": {
			reason: "The workers' disks live on the old class and a clone cannot cross classes.",
			old:    nodePoolHead + `spec: {clusterName: acme, storageClass: replicated}`,
			obj:    nodePoolHead + `spec: {clusterName: acme, storageClass: local}`,
			want:   []string{"spec.storageClass", "storageClass is immutable"},
		},
		"NodePoolStorageClassRemovalIsRejected": {
			reason: "Removing the class would let today's default decide, which may differ from the disks' class.",
			old:    nodePoolHead + `spec: {clusterName: acme, storageClass: replicated}`,
			obj:    nodePoolHead + `spec: {clusterName: acme}`,
			want:   []string{"storageClass cannot be removed once set"},
		},
		"NodePoolStorageClassCanBeDeclaredLater": {
			reason: "Pinning the class a pool already uses is the remedy for a default that moved; it must be allowed.",
			old:    nodePoolHead + `spec: {clusterName: acme}`,
			obj:    nodePoolHead + `spec: {clusterName: acme, storageClass: replicated}`,
		},
		"NodePoolScalesWithItsStorageClass": {
			reason: "Updates that keep the class are not affected by the transition rules.",
			old:    nodePoolHead + `spec: {clusterName: acme, storageClass: replicated, replicas: 1}`,
			obj:    nodePoolHead + `spec: {clusterName: acme, storageClass: replicated, replicas: 5}`,
		},
		"NodePoolAutoscaledIsAdmitted": {
			reason: "An autoscaled pool states its bounds and no replicas; no replicas default gets in the way.",
			obj:    nodePoolHead + `spec: {clusterName: acme, minReplicas: 0, maxReplicas: 10, maxNodeProvisionTime: 1h30m}`,
		},
		"NodePoolOnlyMaxReplicasIsAdmitted": {
			reason: "minReplicas defaults to 0 (scale from zero).",
			obj:    nodePoolHead + `spec: {clusterName: acme, maxReplicas: 3}`,
		},
		"NodePoolReplicasWithBoundsIsRejected": {
			reason: "A fixed count and autoscaler bounds contradict each other.",
			obj:    nodePoolHead + `spec: {clusterName: acme, replicas: 2, maxReplicas: 3}`,
			want:   []string{"set either replicas"},
		},
		"NodePoolMinReplicasWithoutMaxIsRejected": {
			reason: "The autoscaler needs both bounds.",
			obj:    nodePoolHead + `spec: {clusterName: acme, minReplicas: 1}`,
			want:   []string{"minReplicas needs maxReplicas"},
		},
		"NodePoolMinAboveMaxIsRejected": {
			reason: "An empty range.",
			obj:    nodePoolHead + `spec: {clusterName: acme, minReplicas: 4, maxReplicas: 3}`,
			want:   []string{"minReplicas must not exceed maxReplicas"},
		},
		"NodePoolZeroMaxReplicasIsRejected": {
			reason: "A ceiling of zero never runs a worker.",
			obj:    nodePoolHead + `spec: {clusterName: acme, maxReplicas: 0}`,
			want:   []string{"spec.maxReplicas", "greater than or equal to 1"},
		},
		"NodePoolProvisionTimeWithoutAutoscalingIsRejected": {
			reason: "Only the autoscaler reads maxNodeProvisionTime.",
			obj:    nodePoolHead + `spec: {clusterName: acme, maxNodeProvisionTime: 30m}`,
			want:   []string{"maxNodeProvisionTime applies to an autoscaled pool only"},
		},
		"NodePoolBareNumberProvisionTimeIsRejected": {
			reason: "chart: \"30\" has no unit and the autoscaler would silently ignore it.",
			obj:    nodePoolHead + `spec: {clusterName: acme, maxReplicas: 3, maxNodeProvisionTime: "30"}`,
			want:   []string{"spec.maxNodeProvisionTime", "should match"},
		},
		"NodePoolNegativeTimeoutIsRejected": {
			reason: "chart: -5m would remediate the moment the condition flips.",
			obj:    nodePoolHead + `spec: {clusterName: acme, healthCheck: {readyUnknownTimeout: -5m}}`,
			want:   []string{"spec.healthCheck.readyUnknownTimeout", "should match"},
		},
		"NodePoolHealthCheckIsAdmitted": {
			reason: "The chart's knobs, in canonical and short forms.",
			obj:    nodePoolHead + `spec: {clusterName: acme, healthCheck: {maxUnhealthy: "0%", nodeStartupTimeout: 20m0s, readyUnknownTimeout: 5m, readyFalseTimeout: 10m}}`,
		},
		"NodePoolFractionalMaxUnhealthyIsRejected": {
			reason: "chart: maxUnhealthy is a bare integer or an integer percentage.",
			obj:    nodePoolHead + `spec: {clusterName: acme, healthCheck: {maxUnhealthy: "50.5%"}}`,
			want:   []string{"spec.healthCheck.maxUnhealthy", "should match"},
		},
		"NodePoolShortNodeStartupTimeoutIsRejected": {
			reason: "Cluster API's webhook refuses a nodeStartupTimeout under 30s.",
			obj:    nodePoolHead + `spec: {clusterName: acme, healthCheck: {nodeStartupTimeout: 10s}}`,
			want:   []string{"spec.healthCheck.nodeStartupTimeout", "at least 30s"},
		},
		"NodePoolPercentAboveHundredIsRejected": {
			reason: "Tighter than the chart: 150% of a pool means nothing.",
			obj:    nodePoolHead + `spec: {clusterName: acme, rollout: {maxSurge: "150%"}}`,
			want:   []string{"spec.rollout.maxSurge", "percentage from 0% to 100%"},
		},
		"NodePoolCountAboveMaxIsRejected": {
			reason: "More workers than a pool may run.",
			obj:    nodePoolHead + `spec: {clusterName: acme, healthCheck: {maxUnhealthy: "5000"}}`,
			want:   []string{"spec.healthCheck.maxUnhealthy", "count from 0 to 1000"},
		},
		"NodePoolRolloutIsAdmitted": {
			reason: "maxSurge and maxUnavailable take a count or a percentage.",
			obj:    nodePoolHead + `spec: {clusterName: acme, rollout: {maxSurge: "25%", maxUnavailable: "0"}}`,
		},
		"TenantPoolReplicasWithBoundsIsRejected": {
			reason: "The autoscaling rules apply to every pool of a tenant cluster too.",
			obj:    tenantHead + `spec: {nodePools: {a: {replicas: 1, minReplicas: 0, maxReplicas: 2}}}`,
			want:   []string{"spec.nodePools[a]", "set either replicas"},
		},
		"NodePoolClusterNameChangeIsRejected": {
			reason: "A pool cannot move to another cluster.",
			old:    nodePoolHead + `spec: {clusterName: acme}`,
			obj:    nodePoolHead + `spec: {clusterName: other}`,
			want:   []string{"spec.clusterName", "clusterName is immutable"},
		},
		"TenantPoolWithBuiltinAndFactoryIsRejected": {
			reason: "The exclusivity rule applies to every pool of a tenant cluster too.",
			obj:    tenantHead + `spec: {nodePools: {gpu: {osImage: {builtin: {}, factory: {}}}}}`,
			want:   []string{"spec.nodePools[gpu].osImage", "set at most one of builtin"},
		},
		"TenantPoolStorageClassChangeIsRejected": {
			reason: "Map values are correlated by key, so a pool's class is immutable inside a tenant cluster.",
			old:    tenantHead + `spec: {nodePools: {gpu: {storageClass: local}}}`,
			obj:    tenantHead + `spec: {nodePools: {gpu: {storageClass: replicated}}}`,
			want:   []string{"spec.nodePools[gpu].storageClass", "storageClass is immutable"},
		},
		"TenantNewPoolMayUseAnotherStorageClass": {
			reason: "Moving to a new class means a new pool; adding one must be allowed.",
			old:    tenantHead + `spec: {nodePools: {gpu: {storageClass: local}}}`,
			obj:    tenantHead + `spec: {nodePools: {gpu: {storageClass: local}, gpu2: {storageClass: replicated}}}`,
		},
		"TenantStorageClassChangeIsRejected": {
			reason: "Pools that inherit the cluster's class keep their disks on it.",
			old:    tenantHead + `spec: {storageClass: replicated}`,
			obj:    tenantHead + `spec: {storageClass: local}`,
			want:   []string{"spec.storageClass", "storageClass is immutable"},
		},
		"TenantPoolNameMustBeADNSLabel": {
			reason: "Pool names become part of object names.",
			obj:    tenantHead + `spec: {nodePools: {GPU_pool: {}}}`,
			want:   []string{"spec.nodePools", "nodePools keys must be DNS labels"},
		},
		"TenantKubernetesVersionIsAMinor": {
			reason: "version is the Kubernetes minor, vMAJOR.MINOR.",
			obj:    tenantHead + `spec: {version: v1.35.2}`,
			want:   []string{"spec.version", "should match"},
		},
		"TenantMirrorKeyMustBeAHost": {
			reason: "registryMirrors keys are registry hosts or *.",
			obj:    tenantHead + `spec: {talos: {registryMirrors: {"https://docker.io": {endpoints: ["https://mirror.example"]}}}}`,
			want:   []string{"spec.talos.registryMirrors", "must be a registry host"},
		},
		"TenantMirrorKeyMayBeAnIPv6Host": {
			reason: "The API server takes the mirror hosts the function takes (internal/rules RegistryHostPattern): a bracketed IPv6 address with a port.",
			obj:    tenantHead + `spec: {talos: {registryMirrors: {"[fd00::1]:5000": {endpoints: ["https://[fd00::1]:5000"]}}}}`,
		},
		"TenantMirrorKeyWithEmptyLabelIsRefused": {
			reason: "docker..io is no host, in the schema as in the function.",
			obj:    tenantHead + `spec: {talos: {registryMirrors: {"docker..io": {endpoints: ["https://mirror.example"]}}}}`,
			want:   []string{"spec.talos.registryMirrors", "must be a registry host"},
		},
		"TenantMirrorEndpointWithUserinfoIsRefused": {
			reason: "Endpoints follow the one URL grammar: no credentials in a URL.",
			obj:    tenantHead + `spec: {talos: {registryMirrors: {docker.io: {endpoints: ["https://u:p@mirror.example"]}}}}`,
			want:   []string{"spec.talos.registryMirrors.docker.io.endpoints[0]", "should match"},
		},
		"TenantMirrorNeedsEndpoints": {
			reason: "A mirror without endpoints mirrors nothing.",
			obj:    tenantHead + `spec: {talos: {registryMirrors: {docker.io: {skipFallback: true}}}}`,
			want:   []string{"spec.talos.registryMirrors.docker.io.endpoints", "Required value"},
		},
		"TenantWildcardMirrorIsAdmitted": {
			reason: "Talos accepts * as a catch-all mirror.",
			obj:    tenantHead + `spec: {talos: {registryMirrors: {"*": {endpoints: ["https://mirror.example:5000/v2"]}, "registry.local:5000": {endpoints: ["http://10.0.0.1:5000"]}}}}`,
		},
		"CatalogDuplicateEntryIsRejected": {
			reason: "Two entries for one (schematicID, version) would be the same golden.",
			obj:    catalogHead + `spec: {images: [{schematicID: ` + schematic + `, version: v1.13.6}, {schematicID: ` + schematic + `, version: v1.13.6, storage: 8Gi}]}`,
			want:   []string{"spec.images[1]", "Duplicate value"},
		},
		"CatalogEntryNeedsAVersion": {
			reason: "An entry names both halves of the golden.",
			obj:    catalogHead + `spec: {images: [{schematicID: ` + schematic + `}]}`,
			want:   []string{"spec.images[0].version", "Required value"},
		},
		"CatalogEntryVersionMustBeARelease": {
			reason: "The golden name and the factory URL contain the full release.",
			obj:    catalogHead + `spec: {images: [{schematicID: ` + schematic + `, version: latest}]}`,
			want:   []string{"spec.images[0].version", "should match"},
		},
		"CatalogFactoryURLMustBeHTTP": {
			reason: "CDI imports over http(s) only.",
			obj:    catalogHead + `spec: {imageFactoryURL: "ftp://factory.example"}`,
			want:   []string{"spec.imageFactoryURL", "should match"},
		},
		"CatalogStorageMustBeAQuantity": {
			reason: "storage becomes a PVC request.",
			obj:    catalogHead + `spec: {storage: "6 GiB"}`,
			want:   []string{"spec.storage", "should match"},
		},
		"CatalogStorageClassAndStorageClassesAreRejected": {
			reason: "Which class was meant cannot be told: one of them, on the catalog.",
			obj:    catalogHead + `spec: {storageClass: replicated, storageClasses: [local]}`,
			want:   []string{"spec", "set storageClass or storageClasses, not both"},
		},
		"CatalogEntryStorageClassAndStorageClassesAreRejected": {
			reason: "Which class was meant cannot be told: one of them, on an entry.",
			obj:    catalogHead + `spec: {images: [{schematicID: ` + schematic + `, version: v1.13.6, storageClass: a, storageClasses: [b]}]}`,
			want:   []string{"spec.images[0]", "set storageClass or storageClasses, not both"},
		},
		"CatalogStorageClassesAreASet": {
			reason: "A class listed twice would name one golden twice.",
			obj:    catalogHead + `spec: {storageClasses: [local, local]}`,
			want:   []string{"spec.storageClasses[1]", "Duplicate value"},
		},
		"ClaimWithBuiltinAndFactoryIsRejected": {
			reason: "The legacy claim carries the same rules as the composite.",
			dir:    legacyDir,
			obj:    claimHead + `spec: {clusterName: acme, osImage: {builtin: {}, factory: {}}}`,
			want:   []string{"spec.osImage", "set at most one of builtin"},
		},
		"ClaimStorageClassChangeIsRejected": {
			reason: "The legacy claim carries the same transition rules as the composite.",
			dir:    legacyDir,
			old:    claimHead + `spec: {clusterName: acme, storageClass: replicated}`,
			obj:    claimHead + `spec: {clusterName: acme, storageClass: local}`,
			want:   []string{"spec.storageClass", "storageClass is immutable"},
		},
	}
	vs := map[string]map[string]*Validator{
		configurationDir: validators(t, configurationDir),
		legacyDir:        validators(t, legacyDir),
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = configurationDir
			}
			obj := fromYAML(t, tc.obj)
			v := vs[dir][obj["kind"].(string)]
			var got string
			if tc.old == "" {
				_, errs := v.Admit(obj)
				got = errString(errs.ToAggregate())
			} else {
				// The old object is what the API server stored: defaulted.
				old, errs := v.Admit(fromYAML(t, tc.old))
				if len(errs) > 0 {
					t.Fatalf("%s\nthe old object is invalid: %v", tc.reason, errs.ToAggregate())
				}
				_, errs = v.AdmitUpdate(obj, old)
				got = errString(errs.ToAggregate())
			}
			if len(tc.want) == 0 && got != "" {
				t.Errorf("%s\nwant admitted, got: %s", tc.reason, got)
			}
			if len(tc.want) > 0 && got == "" {
				t.Errorf("%s\nwant rejected with %q, got admitted", tc.reason, tc.want)
			}
			for _, w := range tc.want {
				if got != "" && !strings.Contains(got, w) {
					t.Errorf("%s\nwant an error containing %q, got: %s", tc.reason, w, got)
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSchemasApplyDefaults checks what the API server stores for minimal
// composites: every default from internal/defaults lands where the function
// reads it, including inside talos (defaulted to {} first) and each pool.
func TestSchemasApplyDefaults(t *testing.T) {
	talos := map[string]any{
		"version":         defaults.TalosVersion,
		"schematicID":     defaults.TalosSchematicID,
		"imageFactoryURL": defaults.ImageFactoryURL,
	}
	pool := func(extra map[string]any) map[string]any {
		p := map[string]any{
			"diskSize": defaults.DiskSize,
			"osImage":  map[string]any{"builtin": map[string]any{}},
			// Generate: CABPT generates the worker config, as before.
			"bootstrap": map[string]any{"mode": "Generate"},
		}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	cases := map[string]struct {
		reason string
		obj    string
		want   map[string]any
	}{
		"MinimalNodePoolClonesTheDefaultGolden": {
			reason: "A pool that says nothing takes the golden path with the platform's default image (PRODUCT: the shipped XRDs default osImage to {builtin: {}}).",
			obj:    nodePoolHead + `spec: {clusterName: acme}`,
			want: pool(map[string]any{
				"clusterName": "acme", "version": defaults.KubernetesVersion, "goldenNamespace": defaults.GoldenNamespace, "talos": talos,
			}),
		},
		"EmptyOSImageStaysHTTP": {
			reason: "An explicit {} is not defaulted: it asks for an HTTP import with the talos defaults.",
			obj:    nodePoolHead + `spec: {clusterName: acme, osImage: {}}`,
			want: pool(map[string]any{
				"clusterName": "acme", "version": defaults.KubernetesVersion, "goldenNamespace": defaults.GoldenNamespace, "talos": talos,
				"osImage": map[string]any{},
			}),
		},
		"TenantPoolsAreDefaultedOneByOne": {
			reason: "Each pool of a tenant cluster gets the pool defaults; partial talos blocks are completed.",
			obj:    tenantHead + `spec: {talos: {version: v1.12.4}, nodePools: {a: {}, b: {replicas: 3, osImage: {factory: {}}}}}`,
			want: map[string]any{
				"version":         defaults.KubernetesVersion,
				"goldenNamespace": defaults.GoldenNamespace,
				"talos": map[string]any{
					"version":         "v1.12.4",
					"schematicID":     defaults.TalosSchematicID,
					"imageFactoryURL": defaults.ImageFactoryURL,
				},
				"nodePools": map[string]any{
					"a": pool(nil),
					"b": pool(map[string]any{"replicas": int64(3), "osImage": map[string]any{"factory": map[string]any{}}}),
				},
			},
		},
		"MinimalCatalog": {
			reason: "The catalog's defaults are the golden namespace, factory and size.",
			obj:    catalogHead + `spec: {}`,
			want: map[string]any{
				"goldenNamespace": defaults.GoldenNamespace,
				"imageFactoryURL": defaults.ImageFactoryURL,
				"storage":         defaults.GoldenStorage,
			},
		},
	}
	v := validators(t, configurationDir)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := fromYAML(t, tc.obj)
			got, errs := v[obj["kind"].(string)].Admit(obj)
			if len(errs) > 0 {
				t.Fatalf("%s\nunexpected rejection: %v", tc.reason, errs.ToAggregate())
			}
			if diff := cmp.Diff(tc.want, got["spec"]); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
