package io.rdma4j.topology.internal;

import java.util.Locale;

/** A small streaming JSON writer: enough for the topology contract, no dependency. */
public final class JsonWriter {
    private final StringBuilder sb = new StringBuilder();
    private final boolean[] first = new boolean[64];
    private int depth;
    private boolean afterName;

    private void comma() {
        if (afterName) {
            afterName = false;
            return;
        }
        if (depth > 0) {
            if (!first[depth]) {
                sb.append(',');
            }
            first[depth] = false;
            sb.append('\n').append("  ".repeat(depth));
        }
    }

    public JsonWriter beginObject() {
        comma();
        sb.append('{');
        first[++depth] = true;
        return this;
    }

    public JsonWriter endObject() {
        boolean empty = first[depth];
        depth--;
        if (!empty) {
            sb.append('\n').append("  ".repeat(depth));
        }
        sb.append('}');
        return this;
    }

    public JsonWriter beginArray() {
        comma();
        sb.append('[');
        first[++depth] = true;
        return this;
    }

    public JsonWriter endArray() {
        boolean empty = first[depth];
        depth--;
        if (!empty) {
            sb.append('\n').append("  ".repeat(depth));
        }
        sb.append(']');
        return this;
    }

    public JsonWriter name(String name) {
        comma();
        string(name);
        sb.append(": ");
        afterName = true;
        return this;
    }

    public JsonWriter value(String s) {
        comma();
        if (s == null) {
            sb.append("null");
        } else {
            string(s);
        }
        return this;
    }

    public JsonWriter value(long v) {
        comma();
        sb.append(v);
        return this;
    }

    public JsonWriter value(double v) {
        comma();
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            sb.append("null");
        } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            sb.append((long) v);
        } else {
            sb.append(String.format(Locale.ROOT, "%s", v));
        }
        return this;
    }

    public JsonWriter value(boolean v) {
        comma();
        sb.append(v);
        return this;
    }

    /** An array of integers on one line, for CPU lists. */
    public JsonWriter inlineInts(Iterable<Integer> values) {
        comma();
        sb.append('[');
        boolean f = true;
        for (int v : values) {
            if (!f) {
                sb.append(',');
            }
            f = false;
            sb.append(v);
        }
        sb.append(']');
        return this;
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
