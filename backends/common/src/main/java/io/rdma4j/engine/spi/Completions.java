package io.rdma4j.engine.spi;

/**
 * A reusable batch of completions filled by {@link EngineBackend#poll}: primitive arrays indexed {@code 0..count-1},
 * allocated once by the engine per polling thread. Only error completions carry an object ({@link #errorText}).
 */
public final class Completions {
    /**
     * A local operation (write, write with immediate data, read) finished; {@link #context} holds what was posted with
     * it.
     */
    public static final int LOCAL = 0;
    /** A peer's write with immediate data landed here; {@link #immediate} holds the data, {@link #context} is 0. */
    public static final int REMOTE_IMMEDIATE = 1;

    public final long[] context;
    public final int[] kind;
    /** 0 on success, otherwise the backend's positive native error code. */
    public final int[] status;

    public final int[] immediate;
    /** The provider's text for an error completion, {@code null} for successes. */
    public final String[] errorText;

    public int count;

    public Completions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        }
        context = new long[capacity];
        kind = new int[capacity];
        status = new int[capacity];
        immediate = new int[capacity];
        errorText = new String[capacity];
    }

    /** @return how many completions one poll may return */
    public int capacity() {
        return context.length;
    }

    /** Appends a success; returns false when full. For backends. */
    public boolean add(int kind, long context, int immediate) {
        if (count == this.context.length) {
            return false;
        }
        this.kind[count] = kind;
        this.context[count] = context;
        this.immediate[count] = immediate;
        this.status[count] = 0;
        this.errorText[count] = null;
        count++;
        return true;
    }

    /** Appends an error completion; returns false when full. For backends. */
    public boolean addError(int kind, long context, int status, String errorText) {
        if (count == this.context.length) {
            return false;
        }
        this.kind[count] = kind;
        this.context[count] = context;
        this.immediate[count] = 0;
        this.status[count] = status == 0 ? -1 : status;
        this.errorText[count] = errorText;
        count++;
        return true;
    }

    /** Empties the batch before a poll. */
    public void clear() {
        for (int i = 0; i < count; i++) {
            errorText[i] = null;
        }
        count = 0;
    }
}
