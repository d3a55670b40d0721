package io.rdma4j.rendezvous;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A named, registered buffer and the per-lane keys that let a peer read or write it.
 *
 * @param name {@code [A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}}
 * @param owner the owning peer's name; empty when publishing (the directory fills it in from the lease)
 * @param length bytes, > 0
 * @param memoryKind host or GPU memory
 * @param locality where the memory sits
 * @param generation bumped by the owner when it re-registers the memory; a lower one never replaces a higher one
 * @param lanes remote address and key per lane of the owner
 * @param access peer names that may receive the keys; empty: any authenticated peer
 */
public record BufferInfo(
        String name,
        String owner,
        long length,
        MemoryKind memoryKind,
        Locality locality,
        long generation,
        List<LaneKey> lanes,
        Set<String> access) {
    public BufferInfo {
        Objects.requireNonNull(name, "name");
        owner = owner == null ? "" : owner;
        if (length <= 0) {
            throw new IllegalArgumentException("buffer " + name + ": length must be > 0, got " + length);
        }
        Objects.requireNonNull(memoryKind, "memoryKind");
        locality = locality == null ? Locality.UNKNOWN : locality;
        if (generation < 0) {
            throw new IllegalArgumentException("buffer " + name + ": generation must be >= 0, got " + generation);
        }
        lanes = List.copyOf(lanes);
        access = Set.copyOf(access);
    }

    /** A buffer to publish, open to any authenticated peer. */
    public static BufferInfo of(
            String name, long length, MemoryKind kind, Locality locality, long generation, List<LaneKey> lanes) {
        return new BufferInfo(name, "", length, kind, locality, generation, lanes, Set.of());
    }

    /** @return a copy whose keys only the named peers may receive */
    public BufferInfo withAccess(Set<String> peers) {
        return new BufferInfo(name, owner, length, memoryKind, locality, generation, lanes, peers);
    }

    /** @return the key for {@code lane}, or {@code null} if the buffer is not registered there */
    public LaneKey lane(int lane) {
        for (LaneKey k : lanes) {
            if (k.lane() == lane) {
                return k;
            }
        }
        return null;
    }
}
