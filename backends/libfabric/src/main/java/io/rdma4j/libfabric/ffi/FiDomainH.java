package io.rdma4j.libfabric.ffi;

import static io.rdma4j.ffi.Structs.INT;
import static io.rdma4j.ffi.Structs.POINTER;
import static io.rdma4j.ffi.Structs.SIZE_T;
import static io.rdma4j.ffi.Structs.U64;
import static io.rdma4j.ffi.Structs.offset;
import static io.rdma4j.ffi.Structs.struct;
import static io.rdma4j.ffi.Structs.union;

import java.lang.foreign.StructLayout;

/**
 * {@code <rdma/fi_domain.h>} (and {@code struct iovec} from {@code <sys/uio.h>}): AV, MR and domain structs and ops.
 */
public final class FiDomainH {
    private FiDomainH() {}

    /** {@code struct iovec { void *iov_base; size_t iov_len; };} */
    public static final StructLayout IOVEC = struct("iovec", POINTER.withName("iov_base"), SIZE_T.withName("iov_len"));

    /**
     *
     *
     * <pre>
     * struct fi_av_attr {
     *     enum fi_av_type type; int rx_ctx_bits; size_t count; size_t ep_per_node; const char *name;
     *     void *map_addr; uint64_t flags;
     * };</pre>
     */
    public static final StructLayout FI_AV_ATTR = struct(
            "fi_av_attr",
            INT.withName("type"),
            INT.withName("rx_ctx_bits"),
            SIZE_T.withName("count"),
            SIZE_T.withName("ep_per_node"),
            POINTER.withName("name"),
            POINTER.withName("map_addr"),
            U64.withName("flags"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_av {
     *     size_t size;
     *     int (*insert)(struct fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
     *                   void *context);
     *     int (*insertsvc)(...); int (*insertsym)(...);
     *     int (*remove)(struct fid_av *av, fi_addr_t *fi_addr, size_t count, uint64_t flags);
     *     int (*lookup)(...); const char *(*straddr)(...); int (*av_set)(...);
     * };</pre>
     */
    public static final StructLayout FI_OPS_AV = struct(
            "fi_ops_av",
            SIZE_T.withName("size"),
            POINTER.withName("insert"),
            POINTER.withName("insertsvc"),
            POINTER.withName("insertsym"),
            POINTER.withName("remove"),
            POINTER.withName("lookup"),
            POINTER.withName("straddr"),
            POINTER.withName("av_set"));

    /** {@code struct fid_av { struct fid fid; struct fi_ops_av *ops; };} */
    public static final StructLayout FID_AV = struct("fid_av", FabricH.FID.withName("fid"), POINTER.withName("ops"));

    /** {@code struct fid_mr { struct fid fid; void *mem_desc; uint64_t key; };} */
    public static final StructLayout FID_MR =
            struct("fid_mr", FabricH.FID.withName("fid"), POINTER.withName("mem_desc"), U64.withName("key"));

    /**
     *
     *
     * <pre>
     * struct fi_mr_attr {
     *     const struct iovec *mr_iov; size_t iov_count; uint64_t access; uint64_t offset; uint64_t requested_key;
     *     void *context; size_t auth_key_size; uint8_t *auth_key; enum fi_hmem_iface iface;
     *     union { uint64_t reserved; int cuda; int ze; int neuron; int synapseai; } device;
     * };</pre>
     */
    public static final StructLayout FI_MR_ATTR = struct(
            "fi_mr_attr",
            POINTER.withName("mr_iov"),
            SIZE_T.withName("iov_count"),
            U64.withName("access"),
            U64.withName("offset"),
            U64.withName("requested_key"),
            POINTER.withName("context"),
            SIZE_T.withName("auth_key_size"),
            POINTER.withName("auth_key"),
            INT.withName("iface"),
            union(
                    "device",
                    U64.withName("reserved"),
                    INT.withName("cuda"),
                    INT.withName("ze"),
                    INT.withName("neuron"),
                    INT.withName("synapseai")));

    /**
     *
     *
     * <pre>
     * struct fi_ops_domain {
     *     size_t size;
     *     int (*av_open)(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av, void *context);
     *     int (*cq_open)(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq, void *context);
     *     int (*endpoint)(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, void *context);
     *     int (*scalable_ep)(...); int (*cntr_open)(...); int (*poll_open)(...); int (*stx_ctx)(...);
     *     int (*srx_ctx)(...); int (*query_atomic)(...); int (*query_collective)(...); int (*endpoint2)(...);
     * };</pre>
     */
    public static final StructLayout FI_OPS_DOMAIN = struct(
            "fi_ops_domain",
            SIZE_T.withName("size"),
            POINTER.withName("av_open"),
            POINTER.withName("cq_open"),
            POINTER.withName("endpoint"),
            POINTER.withName("scalable_ep"),
            POINTER.withName("cntr_open"),
            POINTER.withName("poll_open"),
            POINTER.withName("stx_ctx"),
            POINTER.withName("srx_ctx"),
            POINTER.withName("query_atomic"),
            POINTER.withName("query_collective"),
            POINTER.withName("endpoint2"));

    /**
     *
     *
     * <pre>
     * struct fi_ops_mr {
     *     size_t size;
     *     int (*reg)(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
     *                uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context);
     *     int (*regv)(...);
     *     int (*regattr)(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags, struct fid_mr **mr);
     * };</pre>
     */
    public static final StructLayout FI_OPS_MR = struct(
            "fi_ops_mr",
            SIZE_T.withName("size"),
            POINTER.withName("reg"),
            POINTER.withName("regv"),
            POINTER.withName("regattr"));

    /** {@code struct fid_domain { struct fid fid; struct fi_ops_domain *ops; struct fi_ops_mr *mr; };} */
    public static final StructLayout FID_DOMAIN =
            struct("fid_domain", FabricH.FID.withName("fid"), POINTER.withName("ops"), POINTER.withName("mr"));

    public static final long AV_ATTR_TYPE = offset(FI_AV_ATTR, "type");
    public static final long AV_ATTR_COUNT = offset(FI_AV_ATTR, "count");
    public static final long AV_OPS = offset(FID_AV, "ops");
    public static final long OPS_AV_INSERT = offset(FI_OPS_AV, "insert");
    public static final long MR_MEM_DESC = offset(FID_MR, "mem_desc");
    public static final long MR_KEY = offset(FID_MR, "key");
    public static final long DOMAIN_OPS = offset(FID_DOMAIN, "ops");
    public static final long DOMAIN_MR = offset(FID_DOMAIN, "mr");
    public static final long OPS_DOMAIN_AV_OPEN = offset(FI_OPS_DOMAIN, "av_open");
    public static final long OPS_DOMAIN_CQ_OPEN = offset(FI_OPS_DOMAIN, "cq_open");
    public static final long OPS_DOMAIN_ENDPOINT = offset(FI_OPS_DOMAIN, "endpoint");
    public static final long OPS_MR_REG = offset(FI_OPS_MR, "reg");
    public static final long OPS_MR_REGATTR = offset(FI_OPS_MR, "regattr");
    public static final long MR_ATTR_IOV = offset(FI_MR_ATTR, "mr_iov");
    public static final long MR_ATTR_IOV_COUNT = offset(FI_MR_ATTR, "iov_count");
    public static final long MR_ATTR_ACCESS = offset(FI_MR_ATTR, "access");
    public static final long MR_ATTR_OFFSET = offset(FI_MR_ATTR, "offset");
    public static final long MR_ATTR_REQUESTED_KEY = offset(FI_MR_ATTR, "requested_key");
    public static final long MR_ATTR_IFACE = offset(FI_MR_ATTR, "iface");
    public static final long MR_ATTR_DEVICE = offset(FI_MR_ATTR, "device");
    public static final long IOVEC_BASE = offset(IOVEC, "iov_base");
    public static final long IOVEC_LEN = offset(IOVEC, "iov_len");

    // ---- enum fi_hmem_iface (fi_domain.h): the iface of struct fi_mr_attr
    public static final int FI_HMEM_SYSTEM = 0;
    public static final int FI_HMEM_CUDA = 1;
    public static final int FI_HMEM_ROCR = 2;
    public static final int FI_HMEM_ZE = 3;
    public static final int FI_HMEM_NEURON = 4;
    public static final int FI_HMEM_SYNAPSEAI = 5;

    /** {@code FI_VERSION(1, 20)}: the first libfabric whose fi_mr_regattr takes a dma-buf ({@code FI_MR_DMABUF}). */
    public static final int FI_VERSION_1_20 = (1 << 16) | 20;
}
