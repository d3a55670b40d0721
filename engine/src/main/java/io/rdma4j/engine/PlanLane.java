package io.rdma4j.engine;

/**
 * One lane of a {@link Plan}.
 *
 * @param localLane local lane index (-1 in offline plans)
 * @param localNic local NIC PCI address or the backend device name when the lane is no PCI NIC
 * @param remoteLane remote lane index (-1 in offline plans)
 * @param remoteNic remote NIC PCI address or device name
 * @param localLevel local NIC to source memory: PIX, PXB, PHB, NODE or SYS
 * @param remoteLevel remote NIC to destination memory
 * @param bytes bytes this lane carries
 * @param chunks chunks this lane posts
 */
public record PlanLane(
        int localLane,
        String localNic,
        int remoteLane,
        String remoteNic,
        String localLevel,
        String remoteLevel,
        long bytes,
        long chunks) {}
