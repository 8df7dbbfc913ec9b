package oxide;

/** A failed liboxide call: the message starts with the status name, e.g. "OXIDE_ERROR_VERIFY: ...". */
public class OxideException extends RuntimeException {
    public OxideException(String message) { super(message); }

    /** The status name ("OXIDE_ERROR_VERIFY"). */
    public String statusName() {
        String m = getMessage();
        int i = m.indexOf(':');
        return i > 0 ? m.substring(0, i) : m;
    }
}
