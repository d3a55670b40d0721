package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FI_ADDR_STR;
import static io.rdma4j.libfabric.ffi.FabricH.FI_ADDR_UNSPEC;
import static io.rdma4j.libfabric.ffi.FabricH.FI_SOCKADDR_IN;
import static io.rdma4j.libfabric.ffi.FabricH.FI_SOCKADDR_IN6;
import static io.rdma4j.libfabric.ffi.FiDomainH.AV_OPS;
import static io.rdma4j.libfabric.ffi.FiDomainH.OPS_AV_INSERT;

import io.rdma4j.libfabric.ffi.Fi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An address vector ({@code fi_av_open}, {@code FI_AV_TABLE}): peers' endpoint names become {@code fi_addr_t} numbers.
 */
public final class AddressVector extends FabricResource {
    private final Domain domain;
    final Set<Endpoint> bound = ConcurrentHashMap.newKeySet();
    private volatile long inserted;

    AddressVector(Domain domain, long fid) {
        super("address vector", domain);
        this.domain = domain;
        opened(fid);
    }

    public Domain domain() {
        return domain;
    }

    @Override
    int closeRank() {
        return 2;
    }

    @Override
    void checkCanClose() {
        if (bound.stream().anyMatch(FabricResource::isOpen)) {
            throw new IllegalStateException(
                    "address vector is still bound to an open endpoint: close the endpoint first");
        }
    }

    /** @return how many peers were inserted; valid peer numbers are {@code 0 .. count - 1} */
    public long count() {
        return inserted;
    }

    boolean isValidPeer(long fiAddr) {
        return fiAddr >= 0 && fiAddr < inserted;
    }

    /**
     * {@code fi_av_insert} of one peer's endpoint name ({@link Endpoint#name()} at the peer). The name comes from the
     * wire and is checked against the provider's address format before libfabric reads it.
     *
     * @return the peer's {@code fi_addr_t}
     */
    public synchronized long insert(byte[] name) {
        long av = fid();
        checkName(name);
        MemorySegment fn = Fi.op(av + AV_OPS, OPS_AV_INSERT, "fi_av_insert");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(name.length + 1L, 8);
            MemorySegment.copy(name, 0, addr, ValueLayout.JAVA_BYTE, 0, name.length);
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            out.set(ValueLayout.JAVA_LONG, 0, FI_ADDR_UNSPEC);
            int rc = guarded("fi_av_insert", () -> (int) Fi.AV_INSERT.invokeExact(fn, av, addr, 1L, out, 0L, 0L));
            if (rc < 0) {
                throw FabricException.of(
                        "fi_av_insert",
                        "name of " + name.length + " bytes",
                        rc,
                        "is the name from an endpoint of the same provider?");
            }
            if (rc != 1) {
                throw new FabricException(
                        "fi_av_insert",
                        "name of " + name.length + " bytes",
                        22,
                        "the provider rejected the peer's name: is it from an endpoint of the same provider?");
            }
            long fiAddr = out.get(ValueLayout.JAVA_LONG, 0);
            inserted = Math.max(inserted, fiAddr + 1);
            return fiAddr;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private void checkName(byte[] name) {
        if (name == null || name.length == 0) {
            throw new IllegalArgumentException("peer name is empty: pass the bytes of the peer's Endpoint.name()");
        }
        Info info = domain.info();
        switch (info.addrFormat()) {
            case FI_SOCKADDR_IN -> requireSockaddr(name, 16, 2, "sockaddr_in");
            case FI_SOCKADDR_IN6 -> requireSockaddr(name, 28, 10, "sockaddr_in6");
            case FI_ADDR_STR -> {
                boolean terminated = false;
                for (byte b : name) {
                    terminated |= b == 0;
                }
                if (!terminated || name.length < 2) {
                    throw new IllegalArgumentException("peer name of " + name.length + " bytes is not a NUL-terminated "
                            + info.provider() + " address string: pass the peer's Endpoint.name() unchanged");
                }
            }
            default -> {
                if (info.srcAddrLen() > 0 && name.length < info.srcAddrLen()) {
                    throw new IllegalArgumentException(
                            "peer name of " + name.length + " bytes is too short: " + info.provider() + " names are "
                                    + info.srcAddrLen() + " bytes; pass the peer's Endpoint.name() unchanged");
                }
            }
        }
    }

    private static void requireSockaddr(byte[] name, int size, int family, String type) {
        if (name.length != size) {
            throw new IllegalArgumentException(
                    "peer name of " + name.length + " bytes is too " + (name.length < size ? "short" : "long") + ": a "
                            + type + " is " + size + " bytes; pass the peer's Endpoint.name() unchanged");
        }
        int f = (name[0] & 0xff) | (name[1] & 0xff) << 8;
        if (f != family) {
            throw new IllegalArgumentException(
                    "peer name is not a " + type + " (address family " + f + ", expected " + family + ")");
        }
    }
}
