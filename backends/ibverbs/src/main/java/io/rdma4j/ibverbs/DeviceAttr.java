package io.rdma4j.ibverbs;

/** The limits of a device ({@code struct ibv_device_attr}), the members a program sizes its resources by. */
public record DeviceAttr(
        String fwVer,
        long nodeGuid,
        long maxMrSize,
        int vendorId,
        int vendorPartId,
        int maxQp,
        int maxQpWr,
        int maxSge,
        int maxSgeRd,
        int maxCq,
        int maxCqe,
        int maxMr,
        int maxPd,
        int maxQpRdAtom,
        int maxQpInitRdAtom,
        int atomicCap,
        int maxAh,
        int maxSrq,
        int maxSrqWr,
        int maxSrqSge,
        int physPortCnt) {}
