"""Human validation: annotation store, agreement, resolution, formats, model pre-screen and a local
annotation web app. Answers go to ``RUN/validation/annotations.sqlite``; ``resolve`` writes
``RUN/validation/judgements.csv``, which ``nlibias extend`` reads."""
