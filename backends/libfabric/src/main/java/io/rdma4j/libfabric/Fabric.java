package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.FABRIC_OPS;
import static io.rdma4j.libfabric.ffi.FabricH.INFO_FABRIC_ATTR;
import static io.rdma4j.libfabric.ffi.FabricH.OPS_FABRIC_DOMAIN;

import io.rdma4j.ffi.SignalGuard;
import io.rdma4j.libfabric.ffi.Fi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * An open fabric ({@code fi_fabric}) for one {@link Info}. It keeps its own copy of the info ({@code fi_dupinfo}), used
 * to open domains and endpoints, and frees it on close.
 */
public final class Fabric extends FabricResource {
    private final Info info;
    private final long infoCopy;
    private final InfoList ownCopy;

    private Fabric(Info info, long infoCopy, InfoList ownCopy) {
        super("fabric " + info.fabric() + " (" + info.provider() + ")", null);
        this.info = info;
        this.infoCopy = infoCopy;
        this.ownCopy = ownCopy;
    }

    /**
     * Opens the fabric of {@code info}; the {@link InfoList} it came from must be open (it may be closed afterwards).
     *
     * @throws IllegalArgumentException when the provider requires an mr_mode this binding does not implement (an info
     *     from {@link Hints#none()} may); {@link Hints#rdm()} never returns one
     */
    public static Fabric open(Info info) {
        String mrProblem = Hints.unhonouredMrMode(info.mrMode());
        if (mrProblem != null) {
            throw new IllegalArgumentException("provider " + info.provider() + " on " + info.domain()
                    + " requires mr_mode " + Info.mrModeToString(info.mrMode()) + ", but " + mrProblem);
        }
        long source = info.address();
        long copy;
        try {
            copy = (long) Fi.FI_DUPINFO.handle().invokeExact(source);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (copy == 0) {
            throw new FabricException("fi_dupinfo", info.provider(), 12, "out of memory");
        }
        InfoList own = new InfoList(copy, Hints.rdm());
        Info mine = own.get(0);
        Fabric fabric = new Fabric(mine, copy, own);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            long attr = Fi.getLong(copy + INFO_FABRIC_ATTR);
            // providers (and the libraries they pull in) are loaded here: keep the JVM's signal handlers
            int rc = SignalGuard.around("fi_fabric(" + info.provider() + ")", () -> {
                try {
                    return (int) Fi.FI_FABRIC.handle().invokeExact(attr, out, 0L);
                } catch (Throwable t) {
                    throw rethrow(t);
                }
            });
            if (rc != 0) {
                own.close();
                throw FabricException.of("fi_fabric", info.provider() + ", " + info.fabric(), rc, null);
            }
            fabric.opened(out.get(ValueLayout.JAVA_LONG, 0));
        }
        return fabric;
    }

    /** @return the attributes this fabric was opened with */
    public Info info() {
        return info;
    }

    long infoAddress() {
        return infoCopy;
    }

    /** {@code fi_domain(fabric, info, &domain, NULL)}: {@code fabric->ops->domain(...)}. */
    public Domain openDomain() {
        long fab = fid();
        MemorySegment fn = Fi.op(fab + FABRIC_OPS, OPS_FABRIC_DOMAIN, "fi_domain");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ValueLayout.ADDRESS);
            int rc = SignalGuard.around("fi_domain(" + info.provider() + ")", () -> {
                try {
                    return (int) Fi.OPEN_WITH_INFO.invokeExact(fn, fab, infoCopy, out, 0L);
                } catch (Throwable t) {
                    throw rethrow(t);
                }
            });
            if (rc != 0) {
                throw FabricException.of("fi_domain", info.provider() + ", " + info.domain(), rc, null);
            }
            return new Domain(this, out.get(ValueLayout.JAVA_LONG, 0));
        }
    }

    @Override
    void afterClose() {
        ownCopy.close();
    }
}
