// Feeds command lines to the real kafka-transactions.sh argument parser of a Kafka distribution, all in
// one JVM, without any broker. Run with Java's source launcher (JEP 330; no javac step):
//
//   java -cp 'KAFKA_HOME/libs/*' tests/e2e/AbortArgsCheck.java < lines
//
// stdin: one command line per line, its arguments (without "kafka-transactions.sh") separated by the
// character U+001F. stdout: one line per input line, tab-separated:
//   OK        key=value ...   the parser accepted it; the namespace it produced (sorted keys)
//   REJECTED  code  message   the tool exited while parsing (what it printed to stderr, " | "-joined)
//   ERROR     exception       anything else
//
// It calls org.apache.kafka.tools.TransactionsCommand.execute(args, adminSupplier, out, time), the
// entry point kafka-transactions.sh's main() calls, with an admin supplier that stops right after
// parsing: the namespace is what the tool would have acted on. Exit.exit is intercepted so that a
// rejected line does not end the JVM.

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import net.sourceforge.argparse4j.inf.Namespace;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.utils.Time;

public class AbortArgsCheck {
    static final class Parsed extends RuntimeException {
        final Namespace ns;

        Parsed(Namespace ns) {
            super(null, null, false, false);
            this.ns = ns;
        }
    }

    static final class Exited extends RuntimeException {
        final int code;

        Exited(int code) {
            super(null, null, false, false);
            this.code = code;
        }
    }

    public static void main(String[] argv) throws Exception {
        Exit.setExitProcedure((code, message) -> {
            throw new Exited(code);
        });
        Method execute = Class.forName("org.apache.kafka.tools.TransactionsCommand")
            .getDeclaredMethod("execute", String[].class, Function.class, PrintStream.class, Time.class);
        execute.setAccessible(true);  // package-private; both sides live in the unnamed module
        Function<Namespace, Object> stopAfterParsing = ns -> {
            throw new Parsed(ns);
        };
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        PrintStream err = System.err;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] args = line.isEmpty() ? new String[0] : line.split("\u001f", -1);
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            String result;
            try {
                execute.invoke(null, args, stopAfterParsing, out, Time.SYSTEM);
                result = "ERROR\treturned without asking for an admin client";
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Parsed) {
                    StringBuilder sb = new StringBuilder("OK");
                    Map<String, Object> attrs = new TreeMap<>(((Parsed) cause).ns.getAttrs());
                    attrs.forEach((k, v) -> sb.append('\t').append(k).append('=').append(v));
                    result = sb.toString();
                } else if (cause instanceof Exited) {
                    String said = captured.toString(StandardCharsets.UTF_8).strip().replace("\n", " | ");
                    result = "REJECTED\t" + ((Exited) cause).code + "\t" + said;
                } else {
                    result = "ERROR\t" + cause;
                }
            } finally {
                System.setErr(err);
            }
            out.println(result.replace("\r", ""));
        }
    }
}
