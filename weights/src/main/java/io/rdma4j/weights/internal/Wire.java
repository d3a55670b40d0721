package io.rdma4j.weights.internal;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.weights.DType;
import io.rdma4j.weights.Shard;
import java.lang.foreign.MemorySegment;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The binary messages publishers and subscribers exchange through published buffers: a publisher's manifest (its epoch,
 * rank and tensors), a subscriber's want manifest (its buffers and the part of each tensor it needs) and a plan (what a
 * subscriber receives and forwards). Each starts with its length and a magic number. Decoding trusts nothing: a
 * truncated, oversized or inconsistent message is refused with an {@link InvalidArgumentException}.
 */
public final class Wire {
    private static final int MANIFEST = 0x5257344d;
    private static final int WANT = 0x52573457;
    private static final int PLAN = 0x52573450;
    private static final int MAX_NAME = 1024;
    /** Longest metadata value: safetensors' {@code __metadata__} values are free text, often a JSON config. */
    private static final int MAX_TEXT = 1 << 20;

    private static final int MAX_METADATA = 4096;

    private Wire() {}

    /** A publisher's manifest: its tensors and the tensor set's metadata (safetensors' {@code __metadata__}). */
    public record Manifest(int epoch, int rank, List<TensorMeta> tensors, Map<String, String> metadata) {}

    /** One piece of a plan as its receiver sees it, and the forwards it makes when that piece lands. */
    public record InPiece(long dst, long length, int count, long stride, List<OutForward> forwards) {
        public long bytes() {
            return length * count;
        }
    }

    /** Forward the runs of a piece to {@code target}'s piece {@code piece}, shifted by {@code delta}. */
    public record OutForward(String target, int slots, int piece, long delta) {}

    /**
     * A plan for one receiver; {@code notices} is the number the rank's next drop notice takes (see
     * {@link DropNotices#next()}): a notice numbered before it was sent before the plan was made.
     */
    public record PlanMessage(int rank, int epoch, int plan, int notices, List<InPiece> pieces) {}

    /**
     * {@return what member {@code m} of {@code p} is told}: its pieces as it receives them and its forwards
     *
     * @param p the plan
     * @param one per member and piece, whether the piece travels as one write ({@link Gather#oneWrites})
     * @param m the member
     * @param rank the publisher's rank
     * @param epoch the publisher's epoch
     * @param notices the number its next drop notice takes
     */
    public static PlanMessage planFor(Plan p, boolean[][] one, int m, int rank, int epoch, int notices) {
        List<InPiece> pieces = new ArrayList<>();
        List<Plan.Piece> in = p.incoming().get(m);
        for (int i = 0; i < in.size(); i++) {
            List<OutForward> fw = new ArrayList<>();
            for (Plan.Forward f : p.forwards().get(m).get(i)) {
                Member t = p.members().get(f.target());
                fw.add(new OutForward(t.name(), t.slots(), f.targetPiece(), f.delta()));
            }
            // the receiver checks the tagged write against the piece: one run when it travels as one write
            Runs.Group g = Gather.atReceiver(in.get(i).runs(), one[m][i]);
            pieces.add(new InPiece(g.dst(), g.length(), g.count(), g.dstStride(), fw));
        }
        return new PlanMessage(rank, epoch, p.id(), notices, pieces);
    }

    public static byte[] manifest(Manifest m) {
        Out o = new Out();
        o.b.putInt(MANIFEST)
                .putInt(m.epoch())
                .putInt(m.rank())
                .putInt(m.tensors().size());
        for (TensorMeta t : m.tensors()) {
            o.name(t.name());
            o.ensure(64 + 8 * t.shape().length);
            o.b.put((byte) t.dtype().ordinal()).putInt(t.shape().length);
            for (long d : t.shape()) {
                o.b.putLong(d);
            }
            o.shard(t.held());
        }
        o.ensure(8);
        o.b.putInt(m.metadata().size());
        for (Map.Entry<String, String> e : m.metadata().entrySet()) {
            o.name(e.getKey());
            o.name(e.getValue());
        }
        return o.done();
    }

    public static Manifest manifest(MemorySegment seg, String from) {
        In in = new In(seg, from, "manifest", MANIFEST);
        try {
            int epoch = in.b.getInt();
            int rank = in.b.getInt();
            int n = in.count(1 << 20);
            if (rank < 0 || rank >= Tags.MAX_RANKS) {
                throw in.bad("rank " + rank + " outside [0, " + Tags.MAX_RANKS + ")");
            }
            List<TensorMeta> ts = new ArrayList<>(Math.min(n, 4096));
            for (int i = 0; i < n; i++) {
                String name = in.name();
                int dt = in.b.get();
                if (dt < 0 || dt >= DType.values().length) {
                    throw in.bad("unknown dtype code " + dt);
                }
                int ndim = in.count(64);
                long[] shape = new long[ndim];
                for (int d = 0; d < ndim; d++) {
                    shape[d] = in.b.getLong();
                }
                DType dtype = DType.values()[dt];
                io.rdma4j.weights.Tensor.byteSize(dtype, shape);
                Shard held = in.shard();
                held.box(shape);
                ts.add(new TensorMeta(name, dtype, shape, held == null ? Shard.FULL : held));
            }
            int entries = in.count(MAX_METADATA);
            Map<String, String> metadata = new LinkedHashMap<>();
            for (int i = 0; i < entries; i++) {
                String key = in.name();
                if (metadata.put(key, in.text(MAX_TEXT)) != null) {
                    throw in.bad("metadata key '" + key + "' appears twice");
                }
            }
            return new Manifest(epoch, rank, ts, metadata);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw in.bad(e.getMessage() == null ? "truncated" : e.getMessage());
        }
    }

    public static byte[] want(Member m) {
        Out o = new Out();
        o.b.putInt(WANT)
                .putInt(m.slots())
                .putLong(m.slotBytes())
                .putInt(m.needs().size());
        for (int i = 0; i < m.needs().size(); i++) {
            o.shard(m.needs().get(i));
            o.b.putLong(m.offsets()[i]);
        }
        return o.done();
    }

    /**
     * Decodes a subscriber's want manifest and checks it against this rank's tensors: every part inside its tensor,
     * every part inside the buffer, no two parts overlapping.
     */
    public static Member want(MemorySegment seg, String from, List<TensorMeta> tensors) {
        In in = new In(seg, from, "want manifest", WANT);
        try {
            int slots = in.b.getInt();
            long slotBytes = in.b.getLong();
            int n = in.b.getInt();
            if (slots < 1 || slots > 2 || slotBytes < 0) {
                throw in.bad(slots + " buffers of " + slotBytes + " bytes");
            }
            if (n != tensors.size()) {
                throw in.bad("names " + n + " tensors where the publisher has " + tensors.size());
            }
            List<Shard> needs = new ArrayList<>(n);
            long[] offsets = new long[n];
            List<long[]> spans = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Shard s = in.shard();
                offsets[i] = in.b.getLong();
                needs.add(s);
                if (s != null) {
                    s.box(tensors.get(i).shape());
                    long len = tensors.get(i).bytes(s);
                    if (offsets[i] < 0 || offsets[i] > slotBytes - len) {
                        throw in.bad("tensor " + tensors.get(i).name() + " at " + offsets[i] + " (" + len
                                + " bytes) lies outside its " + slotBytes + "-byte buffer");
                    }
                    spans.add(new long[] {offsets[i], offsets[i] + len});
                }
            }
            spans.sort((a, b) -> Long.compare(a[0], b[0]));
            for (int i = 1; i < spans.size(); i++) {
                if (spans.get(i)[0] < spans.get(i - 1)[1]) {
                    throw in.bad("two tensors overlap in its buffer at offset " + spans.get(i)[0]);
                }
            }
            return new Member(from, slots, slotBytes, needs, offsets);
        } catch (BufferUnderflowException | IllegalArgumentException | ArithmeticException e) {
            throw in.bad(e.getMessage() == null ? "truncated" : e.getMessage());
        }
    }

    public static byte[] plan(PlanMessage p) {
        Out o = new Out();
        o.b.putInt(PLAN)
                .putInt(p.rank())
                .putInt(p.epoch())
                .putInt(p.plan())
                .putInt(p.notices())
                .putInt(p.pieces().size());
        for (InPiece x : p.pieces()) {
            o.ensure(64);
            o.b.putLong(x.dst()).putLong(x.length()).putInt(x.count()).putLong(x.stride());
            o.b.putInt(x.forwards().size());
            for (OutForward f : x.forwards()) {
                o.name(f.target());
                o.ensure(32);
                o.b.putInt(f.slots()).putInt(f.piece()).putLong(f.delta());
            }
        }
        return o.done();
    }

    /** Decodes a plan and checks every piece lies inside the receiver's {@code slotBytes}-byte buffer. */
    public static PlanMessage plan(MemorySegment seg, String from, long slotBytes) {
        In in = new In(seg, from, "plan", PLAN);
        try {
            int rank = in.b.getInt();
            int epoch = in.b.getInt();
            int id = in.b.getInt();
            int notices = in.b.getInt();
            if (notices < 0 || notices > 0xffff) {
                throw in.bad("drop notice number " + notices + " is not a 16-bit number");
            }
            int n = in.count(Tags.MAX_PIECES);
            List<InPiece> pieces = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long dst = in.b.getLong();
                long len = in.b.getLong();
                int count = in.b.getInt();
                long stride = in.b.getLong();
                if (len <= 0 || count < 1 || dst < 0 || stride < 0) {
                    throw in.bad("piece " + i + " is not a range");
                }
                long end = Math.addExact(Math.addExact(dst, Math.multiplyExact((long) (count - 1), stride)), len);
                if (end > slotBytes) {
                    throw in.bad("piece " + i + " ends at " + end + ", past the " + slotBytes + "-byte buffer");
                }
                int nf = in.count(Tags.MAX_RANKS * 8);
                List<OutForward> fw = new ArrayList<>(nf);
                for (int f = 0; f < nf; f++) {
                    String target = in.name();
                    int slots = in.b.getInt();
                    int piece = in.b.getInt();
                    long delta = in.b.getLong();
                    if (slots < 1 || slots > 2 || piece < 0 || piece >= Tags.MAX_PIECES) {
                        throw in.bad("forward " + f + " of piece " + i + " is malformed");
                    }
                    fw.add(new OutForward(target, slots, piece, delta));
                }
                pieces.add(new InPiece(dst, len, count, stride, fw));
            }
            return new PlanMessage(rank, epoch, id, notices, pieces);
        } catch (BufferUnderflowException | IllegalArgumentException | ArithmeticException e) {
            throw in.bad(e.getMessage() == null ? "truncated" : e.getMessage());
        }
    }

    private static final class Out {
        ByteBuffer b = ByteBuffer.allocate(4096).putInt(0);

        void ensure(int more) {
            if (b.remaining() < more) {
                ByteBuffer n = ByteBuffer.allocate(Math.max(b.capacity() * 2, b.position() + more));
                b.flip();
                n.put(b);
                b = n;
            }
        }

        void name(String s) {
            byte[] u = s.getBytes(StandardCharsets.UTF_8);
            ensure(u.length + 8);
            b.putInt(u.length).put(u);
        }

        void shard(Shard s) {
            ensure(32);
            if (s == null) {
                b.putInt(-2).putLong(0).putLong(0);
            } else {
                b.putInt(s.dim()).putLong(s.start()).putLong(s.end());
            }
        }

        byte[] done() {
            int len = b.position();
            b.putInt(0, len);
            byte[] out = new byte[len];
            b.get(0, out);
            return out;
        }
    }

    private static final class In {
        final ByteBuffer b;
        final String from;
        final String what;

        In(MemorySegment seg, String from, String what, int magic) {
            this.from = from;
            this.what = what;
            if (seg.byteSize() < 8) {
                throw bad("shorter than 8 bytes");
            }
            int len = seg.get(
                    java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0);
            if (len < 8 || len > seg.byteSize()) {
                throw bad("length " + len + " outside [8, " + seg.byteSize() + "]");
            }
            byte[] bytes = new byte[len];
            MemorySegment.copy(seg, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes, 0, len);
            b = ByteBuffer.wrap(bytes);
            b.getInt();
            if (b.getInt() != magic) {
                throw bad("wrong magic number: not a " + what + " of this version of rdma4j-weights");
            }
        }

        InvalidArgumentException bad(String why) {
            return new InvalidArgumentException(from + " sent a malformed " + what + ": " + why);
        }

        int count(int max) {
            int n = b.getInt();
            if (n < 0 || n > max) {
                throw bad("count " + n + " outside [0, " + max + "]");
            }
            return n;
        }

        String name() {
            return text(MAX_NAME);
        }

        String text(int max) {
            int n = count(max);
            byte[] u = new byte[n];
            b.get(u);
            return new String(u, StandardCharsets.UTF_8);
        }

        Shard shard() {
            int dim = b.getInt();
            long s = b.getLong();
            long e = b.getLong();
            if (dim == -2) {
                return null;
            }
            return dim == -1 ? Shard.FULL : new Shard(dim, s, e);
        }
    }
}
