package io.rdma4j.engine.internal;

import io.rdma4j.ClosedException;
import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferException;
import io.rdma4j.engine.VolumeExtent;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.engine.spi.BlockNamespace;
import io.rdma4j.engine.spi.BlockStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/** An opened volume: its connections, namespaces, stripe map and the NIC chosen for each namespace. */
final class VolumeImpl implements StorageVolume {
    final Volumes owner;
    final VolumeSpec spec;
    final String name;
    final List<BlockStore> stores;
    final BlockNamespace[] namespaces;
    final NicChooser.Choice[] nics;
    final StripeMap map;
    final int blockSize;
    /** Per namespace: chunks kept in flight by one transfer (its share of its controller's queue slots). */
    final int[] window;

    final long maxPiece;
    final Set<VolumeTransfer> active = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    VolumeImpl(
            Volumes owner,
            VolumeSpec spec,
            List<BlockStore> stores,
            BlockNamespace[] namespaces,
            BlockStore[] storeOf,
            NicChooser.Choice[] nics,
            long maxPiece) {
        this.owner = owner;
        this.spec = spec;
        this.stores = List.copyOf(stores);
        this.namespaces = namespaces;
        this.nics = nics;
        this.maxPiece = maxPiece;
        this.name = spec.namespaces().getFirst() + (namespaces.length > 1 ? " +" + (namespaces.length - 1) : "");
        int bs = 0;
        long[] sizes = new long[namespaces.length];
        for (int i = 0; i < namespaces.length; i++) {
            BlockNamespace ns = namespaces[i];
            bs = Math.max(bs, ns.blockSize());
            sizes[i] = ns.capacityBytes();
            if (spec.stripeUnit() % ns.blockSize() != 0) {
                throw new InvalidArgumentException("stripe unit " + spec.stripeUnit() + " is not a multiple of "
                        + ns.describe() + "'s " + ns.blockSize() + "-byte blocks: use VolumeSpec.withStripeUnit("
                        + Math.max(spec.stripeUnit(), ns.blockSize()) + ") or larger");
            }
            if (ns.capacityBytes() < spec.stripeUnit()) {
                throw new InvalidArgumentException(
                        ns.describe() + " holds " + ns.capacityBytes() + " bytes, less than one stripe unit ("
                                + spec.stripeUnit() + "): use a smaller stripe unit or leave it out");
            }
        }
        this.blockSize = bs;
        this.map = new StripeMap(spec.stripeUnit(), sizes);
        this.window = new int[namespaces.length];
        for (int i = 0; i < namespaces.length; i++) {
            int sharing = 0;
            for (BlockStore s : storeOf) {
                if (s == storeOf[i]) {
                    sharing++;
                }
            }
            long perCommand = Math.max(4096, storeOf[i].maxTransferBytes());
            long commandsPerPiece = (maxPiece + perCommand - 1) / perCommand;
            window[i] = (int) Math.max(2, storeOf[i].ioSlots() / sharing / commandsPerPiece);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int blockSize() {
        return blockSize;
    }

    @Override
    public long capacityBytes() {
        return map.capacity();
    }

    @Override
    public long stripeUnit() {
        return map.unit();
    }

    @Override
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < namespaces.length; i++) {
            BlockNamespace ns = namespaces[i];
            out.add(ns.describe() + ": " + ns.capacityBytes() + " bytes in " + ns.blockSize() + "-byte blocks, "
                    + window[i] + " chunk(s) in flight, via " + nics[i].label() + " (" + nics[i].reason() + ")");
        }
        return out;
    }

    void ensureOpen() {
        if (closed) {
            throw new ClosedException("volume " + name + " (open it again with engine.openVolume)");
        }
    }

    @Override
    public VolumeExtent extent(long startLba, long length) {
        ensureOpen();
        if (startLba < 0) {
            throw new InvalidArgumentException("extent start LBA " + startLba + " is negative: pass 0 or more");
        }
        if (length <= 0 || length % blockSize != 0) {
            throw new InvalidArgumentException("extent length " + length
                    + " is not a positive multiple of the volume's " + blockSize + "-byte blocks: round it up to "
                    + Math.max(blockSize, (length + blockSize - 1) / blockSize * blockSize));
        }
        long blocks = map.capacity() / blockSize;
        if (startLba >= blocks || length / blockSize > blocks - startLba) {
            throw new InvalidArgumentException("extent of " + length + " bytes from LBA " + startLba
                    + " runs past the end of volume " + name + " (" + blocks + " blocks of " + blockSize + " bytes, "
                    + map.capacity() + " bytes): start lower or shorten it");
        }
        return new VolumeExtent(this, startLba, length);
    }

    @Override
    public CompletableFuture<Void> flush() {
        ensureOpen();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (BlockNamespace ns : namespaces) {
            all.add(ns.flush());
        }
        return CompletableFuture.allOf(all.toArray(new CompletableFuture[0]));
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        for (VolumeTransfer t : List.copyOf(active)) {
            t.fail(new TransferException("volume " + name + " closed with the transfer in flight (" + t.bytesCompleted()
                    + " of " + t.bytesTotal() + " bytes done)"));
        }
        RuntimeException first = null;
        for (BlockStore s : stores) {
            try {
                s.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        owner.closed(this);
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "StorageVolume[" + name + ", " + map.capacity() + " bytes, stripe unit " + map.unit() + "]";
    }
}
