package io.rdma4j.nvmeof.engine;

import io.rdma4j.engine.spi.BlockNamespace;
import io.rdma4j.engine.spi.BlockStore;
import io.rdma4j.engine.spi.DeviceMemory;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.NamespaceInfo;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** One connected controller as the engine sees it; its commands are spread over all I/O queues by the controller. */
final class NvmeofBlockStore implements BlockStore {
    private final Controller controller;
    private final InetAddress source;

    NvmeofBlockStore(Controller controller, InetAddress source) {
        this.controller = controller;
        this.source = source;
    }

    @Override
    public String describe() {
        return controller.target() + " " + controller.subsystemNqn() + " ("
                + controller.info().model().strip() + ", " + controller.ioQueueCount()
                + " I/O queue(s) of depth " + controller.queueDepth() + ", " + (controller.maxTransferBytes() >> 10)
                + " KiB per command, from "
                + (source == null ? "the kernel's route" : source.getHostAddress()) + ")";
    }

    @Override
    public int ioSlots() {
        return controller.ioQueueCount() * controller.queueDepth();
    }

    @Override
    public long maxTransferBytes() {
        return controller.maxTransferBytes();
    }

    @Override
    public BlockNamespace namespace(long nsid) {
        List<Long> active = controller.activeNamespaces();
        if (!active.contains(nsid)) {
            throw new IllegalArgumentException(controller.target() + " " + controller.subsystemNqn()
                    + " has no active namespace " + nsid + ": its namespaces are " + active);
        }
        return new Ns(controller.namespace(nsid));
    }

    @Override
    public void close() {
        controller.close();
    }

    private final class Ns implements BlockNamespace {
        private final NamespaceInfo info;
        private final String description;

        Ns(NamespaceInfo info) {
            this.info = info;
            this.description = controller.target() + "/" + controller.subsystemNqn() + " nsid " + info.nsid();
        }

        @Override
        public long nsid() {
            return info.nsid();
        }

        @Override
        public int blockSize() {
            return info.blockSize();
        }

        @Override
        public long capacityBytes() {
            return info.bytes();
        }

        @Override
        public String describe() {
            return description;
        }

        @Override
        public CompletableFuture<Void> write(long byteOffset, MemorySegment data) {
            return controller.write(info.nsid(), byteOffset / info.blockSize(), data);
        }

        @Override
        public CompletableFuture<Void> read(long byteOffset, MemorySegment into) {
            return controller.read(info.nsid(), byteOffset / info.blockSize(), into);
        }

        @Override
        public void registerDevice(DeviceMemory memory) {
            controller.registerDevice(memory);
        }

        @Override
        public void deregisterDevice(DeviceMemory memory) {
            controller.deregisterDevice(memory);
        }

        @Override
        public CompletableFuture<Void> flush() {
            return controller.flush(info.nsid());
        }
    }
}
