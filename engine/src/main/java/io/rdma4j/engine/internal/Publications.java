package io.rdma4j.engine.internal;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.MemoryLocation;
import io.rdma4j.engine.UnknownBufferException;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The buffers this engine published: by name for the directory and the handshake, by generation for the notifications
 * that name them. Each holds a reference on its registration until unpublished.
 */
final class Publications {
    /** One published buffer; {@code generation} is what a writer's notification names it by. */
    record Published(String name, BufferImpls.Local buffer, long generation, Access access) {}

    private final String owner;
    private final List<LaneDescriptor> lanes;
    private final RegistrationCache registrations;
    private final Map<String, Published> byName = new ConcurrentHashMap<>();
    private final Map<Long, Published> byGeneration = new ConcurrentHashMap<>();
    private final AtomicLong nextGeneration = new AtomicLong(1);
    private volatile Announcement announcement;

    Publications(String owner, List<LaneDescriptor> lanes, RegistrationCache registrations) {
        this.owner = owner;
        this.lanes = lanes;
        this.registrations = registrations;
    }

    /** Publishing goes through our announcement from now on (the engine announces itself once its lanes are up). */
    void announceThrough(Announcement a) {
        this.announcement = a;
    }

    void publish(String bufferName, BufferImpls.Local local, Access access) {
        Names.check("buffer", bufferName);
        Objects.requireNonNull(access, "access is null: pass Access.anyPeer()");
        DeviceBuffers.beforePublish(local);
        long gen = nextGeneration.getAndIncrement();
        registrations.retain(local.entry);
        Published p = new Published(bufferName, local, gen, access);
        Published old = byName.put(bufferName, p);
        byGeneration.put(gen, p);
        if (old != null) {
            byGeneration.remove(old.generation());
            registrations.release(old.buffer().entry);
        }
        announcement.publish(info(p, Names.wire(owner, bufferName)).withAccess(Set.copyOf(access.peers())));
    }

    void unpublish(String bufferName) {
        Published p = byName.remove(bufferName);
        if (p == null) {
            throw new UnknownBufferException("no buffer '" + bufferName + "' is published by " + owner + " (published: "
                    + byName.keySet() + ")");
        }
        byGeneration.remove(p.generation());
        try {
            announcement.unpublish(Names.wire(owner, bufferName));
        } finally {
            registrations.release(p.buffer().entry);
        }
    }

    /** {@return the buffer a notification names by its generation, or null when it is no longer published} */
    Published byGeneration(long generation) {
        return byGeneration.get(generation);
    }

    /** {@return what the handshake tells a peer that asks for {@code wireName}: ours as {@code owner/name} or bare} */
    Optional<BufferInfo> describe(String wireName) {
        String shortName = wireName.startsWith(owner + "/") ? wireName.substring(owner.length() + 1) : wireName;
        Published p = byName.get(shortName);
        return p == null ? Optional.empty() : Optional.of(info(p, wireName));
    }

    private BufferInfo info(Published p, String wire) {
        var reg = p.buffer().entry.registration();
        long delta = p.buffer().segment.address() - reg.address();
        List<LaneKey> keys = new ArrayList<>();
        for (LaneDescriptor d : lanes) {
            keys.add(new LaneKey(d.index(), reg.remoteAddress(d.index()) + delta, reg.remoteKey(d.index())));
        }
        MemoryLocation loc = p.buffer().location;
        Locality locality = loc.gpuAddress() != null
                ? new Locality(loc.numaNode(), -1, loc.gpuAddress())
                : Locality.host(loc.numaNode());
        MemoryKind kind = p.buffer().device != null ? MemoryKind.CUDA : MemoryKind.HOST;
        return new BufferInfo(
                wire,
                "",
                p.buffer().length(),
                kind,
                locality,
                p.generation(),
                keys,
                Set.copyOf(p.access().peers()));
    }
}
