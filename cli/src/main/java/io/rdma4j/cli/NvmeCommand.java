package io.rdma4j.cli;

import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.StorageVolume;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.VolumeSpec;
import io.rdma4j.nvmeof.Checkpoint;
import io.rdma4j.nvmeof.ConnectOptions;
import io.rdma4j.nvmeof.Controller;
import io.rdma4j.nvmeof.ControllerInfo;
import io.rdma4j.nvmeof.DiscoveryLog;
import io.rdma4j.nvmeof.HostIdentity;
import io.rdma4j.nvmeof.NamespaceInfo;
import io.rdma4j.nvmeof.NvmeException;
import io.rdma4j.nvmeof.Target;
import io.rdma4j.nvmeof.volume.VolumeBlocks;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * {@code ./rdma4j nvme}: an NVMe over Fabrics (NVMe/TCP or NVMe/RDMA) host on the command line. A stable contract:
 * scripts call it.
 */
final class NvmeCommand implements Command {
    private static final String USAGE = """
            usage: ./rdma4j nvme VERB --tcp HOST[:PORT] [options]
                   (or --rdma HOST[:PORT] for NVMe/RDMA through RDMA-CM)
              discover   --tcp HOST:PORT                       one line per discovery log entry: NQN, transport,
                                                               address, port
              identify   --tcp HOST:PORT --nqn NQN              controller model, serial, MDTS, queues, namespaces
              write      --tcp HOST:PORT --nqn NQN --nsid N --lba L --in FILE
              read       --tcp HOST:PORT --nqn NQN --nsid N --lba L --length BYTES --out FILE
              checkpoint --tcp HOST:PORT --nqn NQN --nsid N [--lba L] FILE...
                         files as named buffers, manifest written last
              restore    --tcp HOST:PORT --nqn NQN --nsid N [--lba L] --out DIR  restores and verifies every CRC32C
              checkpoint|restore --volume NS[,NS...] [--stripe BYTES] ...
                         the same through the transfer engine: a volume striped over the namespaces
                         (NS = tcp://HOST:PORT/NQN/NSID or rdma://...), reached through the NIC nearest host memory;
                         --lba counts the volume's blocks; --stripe is the stripe unit (1048576)
            options: --hostnqn NQN --hostid UUID (default: kept in ~/.config/rdma4j), --queues N (4), --depth N (128),
                     --digest (header and data digests, NVMe/TCP), --timeout SECONDS (I/O timeout, 30)
                     --no-progress, --progress-every SECONDS: read, write, checkpoint and restore show progress on
                     stderr, a bar on a terminal, else a line every 10 s
            Exit status: 0 on success, 2 with no verb, 1 on any other error
            (the NVMe status named where there is one).""";

    private final PrintStream out;

    NvmeCommand() {
        this(System.out);
    }

    NvmeCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public String name() {
        return "nvme";
    }

    @Override
    public String summary() {
        return "NVMe over Fabrics (TCP, RDMA) host: discover, identify, read, write, checkpoint, restore";
    }

    /** Parsed {@code --name value} options, positional arguments and the progress options. */
    private record Args(Map<String, String> options, List<String> positional, ProgressOptions progress) {
        String need(String name) {
            String v = options.get(name);
            if (v == null) {
                throw new IllegalArgumentException("--" + name + " is required\n" + USAGE);
            }
            return v;
        }

        long number(String name, long dflt) {
            String v = options.get(name);
            if (v == null) {
                if (dflt < 0) {
                    throw new IllegalArgumentException("--" + name + " is required\n" + USAGE);
                }
                return dflt;
            }
            try {
                return Long.decode(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--" + name + " '" + v + "' is not a number");
            }
        }
    }

    private static final List<String> FLAGS = List.of("digest");

    private static Args parse(String[] args, int from) {
        List<String> rest = new ArrayList<>(Arrays.asList(args).subList(from, args.length));
        ProgressOptions progress = ProgressOptions.take(rest);
        String[] a = rest.toArray(String[]::new);
        Map<String, String> o = new HashMap<>();
        List<String> pos = new ArrayList<>();
        for (int i = 0; i < a.length; i++) {
            if (a[i].startsWith("--")) {
                String k = a[i].substring(2);
                if (FLAGS.contains(k)) {
                    o.put(k, "true");
                } else if (i + 1 < a.length) {
                    o.put(k, a[++i]);
                } else {
                    throw new IllegalArgumentException(a[i] + " needs a value\n" + USAGE);
                }
            } else {
                pos.add(a[i]);
            }
        }
        return new Args(o, pos, progress);
    }

    @Override
    public int run(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help")) {
            out.println(USAGE);
            return args.length == 0 ? 2 : 0;
        }
        Args a = parse(args, 1);
        if (a.options().containsKey("volume")) {
            if (a.options().containsKey("tcp")
                    || a.options().containsKey("rdma")
                    || a.options().containsKey("nqn")
                    || a.options().containsKey("nsid")) {
                throw new IllegalArgumentException(
                        "--volume names its namespaces itself: drop --tcp, --rdma, --nqn and --nsid\n" + USAGE);
            }
            return switch (args[0]) {
                case "checkpoint", "restore" -> volume(args[0].equals("checkpoint"), a);
                default ->
                    throw new IllegalArgumentException(
                            "--volume goes with checkpoint and restore, not " + args[0] + "\n" + USAGE);
            };
        }
        boolean rdma = a.options().containsKey("rdma");
        if (rdma && a.options().containsKey("tcp")) {
            throw new IllegalArgumentException("give either --tcp HOST:PORT or --rdma HOST:PORT, not both\n" + USAGE);
        }
        Target target = rdma ? Target.parseRdma(a.need("rdma")) : Target.parseTcp(a.need("tcp"));
        ConnectOptions opts = options(a);
        try {
            return switch (args[0]) {
                case "discover" -> discover(target, opts);
                case "identify" -> identify(target, a.need("nqn"), opts);
                case "write" -> write(target, a, opts);
                case "read" -> read(target, a, opts);
                case "checkpoint" -> checkpoint(target, a, opts);
                case "restore" -> restore(target, a, opts);
                default -> throw new IllegalArgumentException("unknown verb '" + args[0] + "'\n" + USAGE);
            };
        } catch (CompletionException | ExecutionException e) {
            Throwable t = e.getCause();
            if (t instanceof NvmeException n) {
                throw n;
            }
            throw e;
        }
    }

    private static ConnectOptions options(Args a) {
        ConnectOptions o = ConnectOptions.defaults()
                .withIoQueues((int) a.number("queues", 4))
                .withQueueDepth((int) a.number("depth", 128))
                .withIoTimeout(Duration.ofSeconds(a.number("timeout", 30)));
        if (a.options().containsKey("digest")) {
            o = o.withDigests(true, true);
        }
        String hostNqn = a.options().get("hostnqn");
        String hostId = a.options().get("hostid");
        if (hostNqn != null || hostId != null) {
            HostIdentity base = HostIdentity.persistent();
            o = o.withIdentity(new HostIdentity(
                    hostNqn != null ? hostNqn : base.nqn(), hostId != null ? UUID.fromString(hostId) : base.id()));
        }
        return o;
    }

    private int discover(Target target, ConnectOptions opts) {
        DiscoveryLog log = Controller.discover(target, opts);
        for (DiscoveryLog.Entry e : log.entries()) {
            out.printf("%s %s %s %s%n", e.subsystemNqn(), e.transportName(), e.address(), e.serviceId());
        }
        return 0;
    }

    private int identify(Target target, String nqn, ConnectOptions opts) {
        try (Controller c = Controller.connect(target, nqn, opts)) {
            ControllerInfo i = c.info();
            out.printf(
                    "controller %d: %s, serial %s, firmware %s, NVMe %s%n",
                    c.controllerId(), i.model(), i.serial(), i.firmware(), i.versionString());
            out.printf("subsystem %s at %s%n", i.subsystemNqn(), target);
            out.printf(
                    "MDTS %d (max transfer %d bytes), %d I/O queues of depth %d, in-capsule data %d bytes, MAXH2CDATA %d%n",
                    i.mdts(),
                    c.maxTransferBytes(),
                    c.ioQueueCount(),
                    c.queueDepth(),
                    i.inCapsuleDataBytes(),
                    c.maxH2CData());
            for (long nsid : c.activeNamespaces()) {
                NamespaceInfo ns = c.namespace(nsid);
                out.printf(
                        "namespace %d: %d blocks of %d bytes (%s), LBA format %d%n",
                        nsid, ns.blocks(), ns.blockSize(), size(ns.bytes()), ns.lbaFormat());
            }
        }
        return 0;
    }

    private int write(Target target, Args a, ConnectOptions opts) throws Exception {
        Path in = Path.of(a.need("in"));
        long nsid = a.number("nsid", -1);
        long lba = a.number("lba", -1);
        try (Controller c = Controller.connect(target, a.need("nqn"), opts);
                Arena arena = Arena.ofShared();
                FileChannel ch = FileChannel.open(in, StandardOpenOption.READ)) {
            Checkpoint.Blocks blocks = Checkpoint.Blocks.of(c, nsid);
            int bs = blocks.blockSize();
            long len = ch.size();
            if (len == 0) {
                throw new IllegalArgumentException(in + " is empty");
            }
            long padded = (len + bs - 1) / bs * bs;
            MemorySegment buf = arena.allocate(padded, 4096);
            buf.asSlice(0, len).copyFrom(ch.map(FileChannel.MapMode.READ_ONLY, 0, len, arena));
            long t0 = System.nanoTime();
            try (Progress p = Progress.start("nvme write", padded, a.progress())) {
                new ProgressBlocks(blocks, p, lba).write(lba, buf).get();
                c.flush(nsid).get();
            }
            report("wrote", padded, t0, nsid, lba, bs);
            if (padded != len) {
                out.printf("(the last block was padded with %d zero bytes: %s is %d bytes)%n", padded - len, in, len);
            }
        }
        return 0;
    }

    private int read(Target target, Args a, ConnectOptions opts) throws Exception {
        Path outFile = Path.of(a.need("out"));
        long nsid = a.number("nsid", -1);
        long lba = a.number("lba", -1);
        long length = a.number("length", -1);
        try (Controller c = Controller.connect(target, a.need("nqn"), opts);
                Arena arena = Arena.ofShared()) {
            Checkpoint.Blocks blocks = Checkpoint.Blocks.of(c, nsid);
            int bs = blocks.blockSize();
            if (length <= 0 || length % bs != 0) {
                throw new IllegalArgumentException(
                        "--length " + length + " must be a positive multiple of the block size " + bs);
            }
            MemorySegment buf = arena.allocate(length, 4096);
            long t0 = System.nanoTime();
            try (Progress p = Progress.start("nvme read", length, a.progress())) {
                new ProgressBlocks(blocks, p, lba).read(lba, buf).get();
            }
            report("read", length, t0, nsid, lba, bs);
            try (FileChannel ch = FileChannel.open(
                    outFile,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                var bb = buf.asByteBuffer();
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
            }
        }
        return 0;
    }

    private int checkpoint(Target target, Args a, ConnectOptions opts) throws IOException {
        long nsid = a.number("nsid", -1);
        long lba = a.number("lba", 0);
        try (Controller c = Controller.connect(target, a.need("nqn"), opts);
                Arena arena = Arena.ofShared()) {
            checkpoint(Checkpoint.Blocks.of(c, nsid), a, lba, arena, buffer -> {});
        }
        return 0;
    }

    /** @param pin called with each buffer before its I/O (an engine volume registers it) */
    private void checkpoint(Checkpoint.Blocks blocks, Args a, long lba, Arena arena, Consumer<MemorySegment> pin)
            throws IOException {
        if (a.positional().isEmpty()) {
            throw new IllegalArgumentException("checkpoint needs at least one FILE\n" + USAGE);
        }
        LinkedHashMap<String, MemorySegment> buffers = new LinkedHashMap<>();
        long total = 0;
        long padded = 0;
        int bs = blocks.blockSize();
        for (String f : a.positional()) {
            Path p = Path.of(f);
            String name = p.getFileName().toString();
            if (buffers.containsKey(name)) {
                throw new IllegalArgumentException(
                        "two files are named " + name + ": checkpoint entries are named by file name");
            }
            // read into writable native memory (not a read-only mapping): the engine registers what it sends with its
            // NICs
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                MemorySegment m = ch.size() == 0 ? MemorySegment.ofArray(new byte[0]) : arena.allocate(ch.size(), 4096);
                for (long off = 0; off < ch.size(); off += 1 << 30) {
                    var bb = m.asSlice(off, Math.min(1 << 30, ch.size() - off)).asByteBuffer();
                    while (bb.hasRemaining()) {
                        if (ch.read(bb, off + bb.position()) < 0) {
                            throw new IOException(p + " shrank while it was read");
                        }
                    }
                }
                buffers.put(name, m);
                if (m.isNative()) {
                    pin.accept(m);
                }
                total += ch.size();
                padded += (ch.size() + bs - 1) / bs * bs;
            }
        }
        long t0 = System.nanoTime();
        Checkpoint.Manifest m;
        try (Progress p = Progress.start("nvme checkpoint", padded, a.progress())) {
            m = Checkpoint.write(new ProgressBlocks(blocks, p, dataLba(lba, bs)), lba, buffers);
        }
        for (Checkpoint.Entry e : m.entries()) {
            out.printf("%s %d bytes crc32c %08x%n", e.name(), e.length(), e.crc32c());
        }
        report("checkpointed", total, t0, blocks.toString(), lba, blocks.blockSize());
    }

    private int restore(Target target, Args a, ConnectOptions opts) throws IOException {
        long nsid = a.number("nsid", -1);
        long lba = a.number("lba", 0);
        Path dir = Path.of(a.need("out"));
        Files.createDirectories(dir);
        try (Controller c = Controller.connect(target, a.need("nqn"), opts);
                Arena arena = Arena.ofShared()) {
            restore(Checkpoint.Blocks.of(c, nsid), lba, dir, arena, a.progress(), buffer -> {});
        }
        return 0;
    }

    /** @param pin called with each buffer before its I/O (an engine volume registers it) */
    private void restore(
            Checkpoint.Blocks blocks,
            long lba,
            Path dir,
            Arena arena,
            ProgressOptions progress,
            Consumer<MemorySegment> pin)
            throws IOException {
        long t0 = System.nanoTime();
        Checkpoint.Manifest m = Checkpoint.readManifest(blocks, lba);
        Map<String, MemorySegment> bufs = new LinkedHashMap<>();
        try (Progress p = Progress.start("nvme restore", m.dataBytes(), progress)) {
            Checkpoint.restore(
                    new ProgressBlocks(blocks, p, dataLba(lba, blocks.blockSize())),
                    lba,
                    m,
                    e -> bufs.computeIfAbsent(e.name(), k -> {
                        MemorySegment b = arena.allocate(Math.max(1, e.length()), 4096);
                        pin.accept(b);
                        return b;
                    }));
        }
        long total = 0;
        for (Checkpoint.Entry e : m.entries()) {
            if (e.name().contains("/") || e.name().equals("..") || e.name().equals(".")) {
                throw new NvmeException(
                        "checkpoint entry name '" + e.name() + "' is not a plain file name; refusing to write it");
            }
            try (FileChannel ch = FileChannel.open(
                    dir.resolve(e.name()),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                var bb = bufs.get(e.name()).asSlice(0, e.length()).asByteBuffer();
                while (bb.hasRemaining()) {
                    ch.write(bb);
                }
            }
            total += e.length();
            out.printf("%s %d bytes crc32c %08x verified%n", e.name(), e.length(), e.crc32c());
        }
        report("restored", total, t0, blocks.toString(), lba, blocks.blockSize());
    }

    /** checkpoint or restore through the engine, on a volume striped over the namespaces of {@code --volume}. */
    private int volume(boolean checkpoint, Args a) throws IOException {
        List<VolumeSpec.Namespace> namespaces = new ArrayList<>();
        for (String n : a.need("volume").split(",")) {
            namespaces.add(VolumeSpec.Namespace.parse(n.strip()));
        }
        VolumeSpec spec = VolumeSpec.of(namespaces)
                .withStripeUnit(a.number("stripe", VolumeSpec.DEFAULT_STRIPE_UNIT))
                .withOption("ioQueues", String.valueOf(a.number("queues", 4)))
                .withOption("queueDepth", String.valueOf(a.number("depth", 128)))
                .withOption("ioTimeoutMs", String.valueOf(a.number("timeout", 30) * 1000));
        if (a.options().containsKey("digest")) {
            spec = spec.withOption("headerDigest", "true").withOption("dataDigest", "true");
        }
        if (a.options().containsKey("hostnqn")) {
            spec = spec.withOption("hostNqn", a.options().get("hostnqn"));
        }
        if (a.options().containsKey("hostid")) {
            spec = spec.withOption("hostId", a.options().get("hostid"));
        }
        long lba = a.number("lba", 0);
        Path dir = checkpoint ? null : Path.of(a.need("out"));
        if (dir != null) {
            Files.createDirectories(dir);
        }
        // The engine here only moves storage I/O: its peer lanes stay on loopback (libfabric tcp), so nothing is opened
        // or
        // pinned on the NICs for peers that never come; the volume's connections leave by the NIC the engine chooses.
        try (TransferEngine engine = TransferEngine.builder()
                        .name("nvme-cli-" + ProcessHandle.current().pid())
                        .backend("libfabric")
                        .provider("tcp")
                        .nicFilter("lo")
                        .build();
                StorageVolume v = engine.openVolume(spec);
                Arena arena = Arena.ofShared();
                Registrations pinned = new Registrations()) {
            for (String line : v.describe()) {
                out.println("namespace " + line);
            }
            VolumeBlocks blocks = new VolumeBlocks(engine, v, arena);
            // each buffer registered whole, once: the pieces ProgressBlocks issues reuse that registration
            Consumer<MemorySegment> pin = buffer -> pinned.add(engine.register(buffer));
            if (checkpoint) {
                checkpoint(blocks, a, lba, arena, pin);
            } else {
                restore(blocks, lba, dir, arena, a.progress(), pin);
            }
        }
        return 0;
    }

    /** @return the first block of a checkpoint's data at {@code lba}, after its manifest area */
    private static long dataLba(long lba, int bs) {
        return lba + Checkpoint.MANIFEST_BYTES / bs;
    }

    /** The engine registrations of a volume checkpoint's buffers, closed (deregistered) together. */
    private static final class Registrations implements AutoCloseable {
        private final List<LocalBuffer> buffers = new ArrayList<>();

        void add(LocalBuffer b) {
            buffers.add(b);
        }

        @Override
        public void close() {
            buffers.forEach(LocalBuffer::close);
        }
    }

    private void report(String verb, long bytes, long t0, String where, long lba, int bs) {
        double s = (System.nanoTime() - t0) / 1e9;
        out.printf(
                Locale.ROOT,
                "%s %d bytes (%s) at %s LBA %d (%d-byte blocks) in %.3f s: %.1f MB/s%n",
                verb,
                bytes,
                size(bytes),
                where,
                lba,
                bs,
                s,
                bytes / 1e6 / Math.max(s, 1e-9));
    }

    private void report(String verb, long bytes, long t0, long nsid, long lba, int bs) {
        report(verb, bytes, t0, "namespace " + nsid, lba, bs);
    }

    private static String size(long b) {
        if (b >= 1L << 30) {
            return String.format(Locale.ROOT, "%.1f GiB", b / (double) (1L << 30));
        }
        if (b >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", b / (double) (1L << 20));
        }
        return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
    }
}
