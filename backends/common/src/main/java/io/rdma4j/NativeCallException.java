package io.rdma4j;

/**
 * A native call failed. Carries the C function, the native error code as the library reports it (a positive errno, or
 * the absolute value of a negative {@code -FI_*} / {@code -errno} return) and the library's text for it. The message
 * reads like {@code ibv_reg_mr(len=1048576) failed: error 12 (Cannot allocate memory)}.
 */
public class NativeCallException extends Rdma4jException {
    private final String function;
    private final int code;
    private final String codeText;

    public NativeCallException(String function, String args, int code, String codeText, String hint) {
        super(format(function, args, code, codeText, hint));
        this.function = function;
        this.code = code;
        this.codeText = codeText;
    }

    /** @return the C function that failed, e.g. {@code fi_write} */
    public String function() {
        return function;
    }

    /** @return the native error code, positive (errno or FI_* value); unknown codes are kept as they are */
    public int code() {
        return code;
    }

    /** @return the library's text for {@link #code()} */
    public String codeText() {
        return codeText;
    }

    static String format(String function, String args, int code, String codeText, String hint) {
        StringBuilder sb = new StringBuilder(function)
                .append('(')
                .append(args == null ? "" : args)
                .append(") failed: error ")
                .append(code)
                .append(" (")
                .append(codeText == null || codeText.isEmpty() ? "unknown error" : codeText)
                .append(')');
        if (hint != null && !hint.isEmpty()) {
            sb.append(". ").append(hint);
        }
        return sb.toString();
    }
}
