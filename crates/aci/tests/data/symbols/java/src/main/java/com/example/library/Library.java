package com.example.library;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

@Repository.Audited
public class Library implements Repository<String, Book> {

    public static final int MAX_LOANS = 3;
    private static final String DEFAULT_BRANCH = "main";
    private static int openLibraries = 0;
    private final Map<String, Book> books = new HashMap<>();
    private final List<Loan> loans = new ArrayList<>();

    public enum Status {
        AVAILABLE,
        ON_LOAN;

        public boolean lendable() {
            return this == AVAILABLE;
        }
    }

    /** A book lent to a member. */
    public static class Loan {
        private final Book book;
        private final String member;

        Loan(Book book, String member) {
            this.book = book;
            this.member = member;
        }

        public String member() {
            return member;
        }
    }

    public Library() {
        openLibraries++;
    }

    @Override
    public Optional<Book> find(String isbn) {
        return Optional.ofNullable(books.get(Book.parse(isbn)));
    }

    @Override
    public List<Book> findAll() {
        return new ArrayList<>(books.values());
    }

    @Override
    public void save(String isbn, Book book) {
        books.put(Book.parseIsbn(isbn), book);
    }

    public Status status(String isbn) {
        for (Loan loan : loans) {
            if (loan.book.isbn().equals(isbn)) {
                return Status.ON_LOAN;
            }
        }
        return Status.AVAILABLE;
    }

    public Loan lend(
            String isbn,
            String member) {
        long held = loans.stream().filter(l -> l.member().equals(member)).count();
        if (held >= MAX_LOANS || !status(isbn).lendable()) {
            throw new IllegalStateException("cannot lend " + isbn + " at " + DEFAULT_BRANCH);
        }
        Loan loan = new Loan(find(isbn).orElseThrow(), member);
        loans.add(loan);
        return loan;
    }

    public static <T extends Comparable<T>> List<T> sorted(
            List<T> items,
            Comparator<? super T> tieBreak) {
        List<T> copy = new ArrayList<>(items);
        copy.sort(Comparator.<T>naturalOrder().thenComparing(tieBreak));
        return copy;
    }
}
