"""Notebook situations for ``bench_context_relevance``: setup, a request in words, needed facts.

Each situation has ``hidden`` code (run without history: data loaded from files the model never
sees, so what it defines is known to the kernel only), ``cells`` (run with history, as the user
typed them), a ``request`` that never spells an identifier (a variable or column name; labels, the
values the user filters on, may be named: "shipped"), ``needs`` (strings a correct
answer needs; one counts as visible in the code when it appears, unquoted, in ``cells``, else
as kernel-only) and ``secrets`` (strings that must never be sent).
"""

from __future__ import annotations

PRELUDE = "import numpy as np\nimport pandas as pd\n_rng = np.random.default_rng(7)\n"

SITUATIONS: list[dict] = [
    {
        "name": "labels: premium plans",
        "hidden": PRELUDE
        + "cust_tbl = pd.DataFrame({'cust_id': np.arange(5000), 'plan_tier': _rng.choice("
        "['Premium plan (annual)', 'Premium plan (monthly)', 'Basic', 'Free trial'], 5000), "
        "'signup': pd.date_range('2022-01-01', periods=5000, freq='h'), "
        "'monthly_spend': _rng.gamma(2, 30, 5000)})",
        "cells": ["cust_tbl.shape"],
        "request": "average monthly spend of the premium customers",
        "needs": [
            "cust_tbl",
            "'plan_tier'",
            "'Premium plan (annual)'",
            "'Premium plan (monthly)'",
            "'monthly_spend'",
        ],
    },
    {
        "name": "labels: French rows with variants",
        "hidden": PRELUDE
        + "ord_df = pd.DataFrame({'order_no': np.arange(3000), 'ship_country': _rng.choice("
        "['FR', 'France ', 'france', 'DE', 'Germany', 'ES'], 3000), "
        "'total_eur': _rng.random(3000) * 100})",
        "cells": ["ord_df.head(0)"],
        "request": "keep only the orders shipped to France",
        "needs": ["ord_df", "'ship_country'", "'FR'", "'France '", "'france'"],
    },
    {
        "name": "labels: shipped status in three spellings",
        "hidden": PRELUDE + "dlv = pd.DataFrame({'parcel': np.arange(800), 'state': _rng.choice("
        "['Shipped', 'shipped', 'SHIPPED ', 'Pending', 'Lost'], 800)})",
        "cells": ["len(dlv)"],
        "request": "how many parcels were shipped?",
        "needs": ["dlv", "'state'", "'Shipped'", "'shipped'", "'SHIPPED '"],
    },
    {
        "name": "labels: one department among many",
        "hidden": PRELUDE
        + "_depts = [f'Dept {i:02d}' for i in range(44)] + ['Data Science & ML']\n"
        "staff = pd.DataFrame({'employee': np.arange(4000), 'dept_name': _rng.choice(_depts, "
        "4000), 'salary': _rng.normal(50000, 9000, 4000)})",
        "cells": ["staff.salary.mean()"],
        "request": "median salary in the data science team",
        "needs": ["staff", "'dept_name'", "'Data Science & ML'"],
    },
    {
        "name": "labels: rare brand among 300 categories",
        "hidden": PRELUDE + "_brands = [f'Brand {i}' for i in range(299)] + ['Acme Corp']\n"
        "sku_table = pd.DataFrame({'sku': np.arange(20000), 'brand': pd.Categorical(_rng.choice("
        "_brands, 20000)), 'units_sold': _rng.integers(0, 50, 20000)})",
        "cells": ["sku_table.dtypes"],
        "request": "units sold for the Acme products",
        "needs": ["sku_table", "'brand'", "'Acme Corp'", "'units_sold'"],
    },
    {
        "name": "labels: 5,000,000 trips, payment types",
        "hidden": PRELUDE
        + "rides = pd.DataFrame({'trip_id': np.arange(5_000_000), 'payment_type': np.resize("
        "np.array(['Cash', 'Credit card', 'credit card ', 'Dispute', 'No charge'], dtype=object),"
        " 5_000_000), 'fare': np.resize(np.arange(3.0, 60.0), 5_000_000)})",
        "cells": ["rides.fare.describe()"],
        "request": "what share of the trips was paid by card?",
        "needs": ["rides", "'payment_type'", "'Credit card'", "'credit card '"],
    },
    {
        "name": "labels: iris-like species",
        "hidden": PRELUDE
        + "flowers = pd.DataFrame({'petal_length': _rng.random(150) * 6, 'petal_width': "
        "_rng.random(150) * 2, 'flower_type': np.repeat(['setosa', 'versicolor', 'virginica'], "
        "50)})",
        "cells": ["flowers.describe()"],
        "request": "scatter of petal length against width, coloured by species, only virginica",
        "needs": ["flowers", "'petal_length'", "'petal_width'", "'flower_type'", "'virginica'"],
    },
    {
        "name": "sentinel: ages coded -999",
        "hidden": PRELUDE
        + "survey = pd.DataFrame({'resp_id': np.arange(2000), 'resp_age': np.where(_rng.random("
        "2000) < 0.08, -999, _rng.integers(18, 90, 2000)), 'score': _rng.random(2000)})",
        "cells": ["survey.head(0)"],
        "request": "mean age of the respondents",
        "needs": ["survey", "'resp_age'", "-999"],
    },
    {
        "name": "sentinel: temperature series coded 9999",
        "hidden": PRELUDE
        + "temps = pd.Series(np.where(_rng.random(5000) < 0.05, 9999.0, _rng.normal(12, 6, "
        "5000)), name='air_temp_c')",
        "cells": ["type(temps)"],
        "request": "smooth the temperature readings with a rolling mean",
        "needs": ["temps", "9999"],
    },
    {
        "name": "numbers stored as text",
        "hidden": PRELUDE
        + "ledger = pd.DataFrame({'sales_area': _rng.choice(['North', 'South'], 500), "
        "'amount_usd': [f'{x:,.2f}' for x in _rng.random(500) * 5000]})",
        "cells": ["ledger.shape"],
        "request": "total revenue per region",
        "needs": ["ledger", "'amount_usd'", "stored as text", "'sales_area'", "'North'"],
    },
    {
        "name": "numbers stored as text with percent signs",
        "hidden": PRELUDE
        + "kpis = pd.DataFrame({'quarter': ['Q1', 'Q2', 'Q3', 'Q4'] * 25, 'yoy_chg': "
        "[f'{x:.1f}%' for x in _rng.normal(3, 2, 100)]})",
        "cells": ["kpis.quarter.unique()"],
        "request": "average growth rate per quarter",
        "needs": ["kpis", "'yoy_chg'", "stored as text"],
    },
    {
        "name": "wide: humidity among 2,000 sensor columns",
        "hidden": PRELUDE
        + "readings = pd.DataFrame(_rng.random((60, 2000)), columns=[f'sensor_{i}' for i in "
        "range(1998)] + ['ambient_humidity', 'site_code'])",
        "cells": ["readings.shape"],
        "request": "plot the humidity over time for each site",
        "needs": ["readings", "'ambient_humidity'", "'site_code'", "sensor_"],
    },
    {
        "name": "wide: tumour stage after 5,000 genes",
        "hidden": PRELUDE
        + "expr = pd.DataFrame(_rng.random((40, 5000)), columns=[f'GENE_{i:04d}' for i in "
        "range(5000)])\nexpr['tumor_stage'] = _rng.choice(['Stage I', 'Stage II', 'stage ii'], "
        "40)",
        "cells": ["expr.iloc[:3, :3]"],
        "request": "count the samples per tumour stage",
        "needs": ["expr", "'tumor_stage'", "'Stage II'", "'stage ii'"],
    },
    {
        "name": "wide: camelCase columns",
        "hidden": PRELUDE
        + "sales = pd.DataFrame({**{f'feat{i}': _rng.random(30) for i in range(300)}, "
        "'customerID': _rng.integers(0, 9, 30), 'orderTotal': _rng.random(30) * 90})",
        "cells": ["sales.shape"],
        "request": "biggest order total for each customer",
        "needs": ["sales", "'customerID'", "'orderTotal'"],
    },
    {
        "name": "large namespace: invoices among 300 variables",
        "hidden": PRELUDE + "for _i in range(300):\n    globals()[f'tmp_{_i}'] = [_i] * 5\n"
        "invoice_lines = pd.DataFrame({'invoice': np.arange(100), 'qty': _rng.integers(-3, 9, "
        "100), 'unit_price': _rng.random(100)})\n"
        "for _i in range(300, 320):\n    globals()[f'tmp_{_i}'] = {'a': _i}",
        "cells": ["tmp_1"],
        "request": "which invoices have a negative quantity?",
        "needs": ["invoice_lines", "'qty'"],
    },
    {
        "name": "large namespace: weather of 150 cities",
        "hidden": PRELUDE + "_cities = ['oslo', 'lima'] + [f'city{i}' for i in range(148)]\n"
        "for _c in _cities:\n    globals()[f'weather_{_c}'] = pd.DataFrame({'day': np.arange(30),"
        " 'rain_mm': _rng.random(30)})",
        "cells": ["weather_city7.shape"],
        "request": "compare the rainfall in Oslo and Lima",
        "needs": ["weather_oslo", "weather_lima", "'rain_mm'"],
    },
    {
        "name": "large namespace: 500 scalars and one model table",
        "hidden": PRELUDE
        + "churn_features = pd.DataFrame({'tenure_months': _rng.integers(1, 72, 400), "
        "'churned': _rng.random(400) < 0.2})\n"
        "for _i in range(500):\n    globals()[f'param_{_i}'] = _i * 0.5",
        "cells": ["param_3 + param_4"],
        "request": "fit a logistic regression predicting churn from tenure",
        "needs": ["churn_features", "'tenure_months'", "'churned'"],
    },
    {
        "name": "container: dict of sheets",
        "hidden": PRELUDE
        + "wb = {name: pd.DataFrame({'sku': np.arange(20), 'qty': _rng.integers(0, 9, 20)})"
        " for name in ['Q1 sales', 'Q2 sales', 'returns']}",
        "cells": ["len(wb)"],
        "request": "stack the quarterly sales sheets and sum the units",
        "needs": ["wb", "'Q1 sales'", "'Q2 sales'", "'qty'"],
    },
    {
        "name": "container: dict of lists",
        "hidden": PRELUDE
        + "scores_by_team = {'red': [3, 5, 8], 'blue': [9, 2], 'green': [4, 4, 4, 4]}",
        "cells": ["print('loaded')"],
        "request": "which team has the best average score?",
        "needs": ["scores_by_team", "'red'", "'blue'", "'green'"],
    },
    {
        "name": "container: list of records",
        "hidden": PRELUDE
        + "log_rows = [{'user_id': i % 7, 'event_type': ['click', 'view'][i % 2], 'ts': i} "
        "for i in range(300)]",
        "cells": ["len(log_rows)"],
        "request": "count events per type for each user",
        "needs": ["log_rows", "'user_id'", "'event_type'"],
    },
    {
        "name": "container: list of image batches",
        "hidden": PRELUDE + "imgs = [np.zeros((32, 3, 64, 64), dtype='float32') for _ in range(5)]",
        "cells": ["len(imgs)"],
        "request": "stack the image batches into one array",
        "needs": ["imgs", "(32, 3, 64, 64)"],
    },
    {
        "name": "container: nested config",
        "hidden": PRELUDE
        + "params = {'model': {'max_depth': 6, 'eta': 0.3}, 'data': {'test_size': 0.2}}",
        "cells": ["sorted(params)"],
        "request": "train again with a shallower tree",
        "needs": ["params", "'max_depth'"],
    },
    {
        "name": "aliases: import cell far back",
        "hidden": "",
        "cells": [
            "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
            "import numpy as np",
            "dur_s = np.abs(np.random.default_rng(1).normal(30, 9, 500))",
            *[f"step_{i} = {i}" for i in range(8)],
        ],
        "request": "histogram of the durations",
        "needs": ["dur_s", "matplotlib.pyplot", "np = numpy"],
    },
    {
        "name": "aliases: from-imports and a module alias",
        "hidden": "",
        "cells": [
            "import datetime as dt\nimport collections as cl",
            *[f"note_{i} = 'n{i}'" for i in range(7)],
            "stamps = ['2024-01-02', '2024-03-04']",
        ],
        "request": "parse the date strings and count them per month",
        "needs": ["stamps", "dt = datetime", "cl = collections"],
    },
    {
        "name": "error: column with a trailing space",
        "hidden": PRELUDE + "report = pd.DataFrame({'Revenue ': [1.0, 2.0], 'Cost': [0.5, 1.0]})",
        "cells": ["report['Revenue'].sum()"],
        "request": "fix this",
        "needs": ["report", "KeyError", "'Revenue '"],
    },
    {
        "name": "error: missing config key",
        "hidden": "settings = {'lr': 0.01, 'epochs': 10, 'batch': 32}",
        "cells": ["rate = settings['learning_rate']"],
        "request": "why does this fail?",
        "needs": ["settings", "KeyError", "'lr'"],
    },
    {
        "name": "abbreviations: qty and sku",
        "hidden": PRELUDE
        + "basket = pd.DataFrame({'product_sku': _rng.choice(['A1', 'B2'], 50), 'qty_ordered': "
        "_rng.integers(1, 5, 50), 'unit_px': _rng.random(50)})",
        "cells": ["basket.shape"],
        "request": "total quantity ordered per product",
        "needs": ["basket", "'qty_ordered'", "'product_sku'"],
    },
    {
        "name": "typos in the request",
        "hidden": PRELUDE
        + "climate = pd.DataFrame({'city_name': _rng.choice(['Oslo', 'Rome'], 90), "
        "'temperature_c': _rng.normal(10, 5, 90)})",
        "cells": ["climate.shape"],
        "request": "avarage temprature per citty",
        "needs": ["climate", "'temperature_c'", "'city_name'"],
    },
    {
        "name": "similar tables: two years of sales",
        "hidden": PRELUDE
        + "sales_2023 = pd.DataFrame({'month': range(12), 'net_sales': _rng.random(12)})\n"
        "sales_2024 = pd.DataFrame({'month': range(12), 'net_sales': _rng.random(12)})\n"
        "for _i in range(60):\n    globals()[f'scratch_{_i}'] = pd.DataFrame({'x': [1]})",
        "cells": ["scratch_1.shape"],
        "request": "compare monthly net sales between 2023 and 2024",
        "needs": ["sales_2023", "sales_2024", "'net_sales'"],
    },
    {
        "name": "index: country and year",
        "hidden": PRELUDE
        + "panel = pd.DataFrame({'real_output': _rng.random(6)}, index=pd.MultiIndex.from_product("
        "[['Norway', 'Peru'], [2010, 2011, 2012]], names=['country', 'year']))",
        "cells": ["panel.shape"],
        "request": "growth of gdp for Norway since 2010",
        "needs": ["panel", "'country'", "'year'", "'real_output'"],
    },
    {
        "name": "secrets: keys next to the data",
        "hidden": PRELUDE + "OPENAI_API_KEY = 'sk-proj-Abc123Def456Ghi789Jkl012Mno345'\n"
        "db_password = 'correct-horse-battery-99'\n"
        "db_host = 'db.internal.example'\n"
        "schema_df = pd.DataFrame({'table_name': ['users', 'orders'], 'rows': [10, 20]})",
        "cells": ["len(schema_df)"],
        "request": "connect to the database and list the tables",
        "needs": ["schema_df", "db_host", "'table_name'"],
        "secrets": ["sk-proj-Abc123Def456Ghi789Jkl012Mno345", "correct-horse-battery-99"],
    },
    {
        "name": "secrets: a password column and a token in a dict",
        "hidden": PRELUDE
        + "users_tbl = pd.DataFrame({'login': ['ann', 'bob', 'cy'] * 10, 'password': "
        "['pa55-ann-xyz', 'pa55-bob-xyz', 'pa55-cy-xyz'] * 10, 'tier': ['free', 'pro', 'pro'] "
        "* 10})\n"
        "service = {'url': 'https://api.example', 'token': 'ghp_" + "Zx9" * 12 + "'}",
        "cells": ["users_tbl.shape"],
        "request": "how many accounts are on the pro plan?",
        "needs": ["users_tbl", "'tier'", "'pro'"],
        "secrets": ["pa55-ann-xyz", "pa55-bob-xyz", "ghp_" + "Zx9" * 12],
    },
    {
        "name": "ordinary: the last frame and its columns",
        "hidden": "",
        "cells": [
            "import pandas as pd",
            "df = pd.DataFrame({'height_cm': [170, 182, 165], 'weight_kg': [65, 80, 58]})",
        ],
        "request": "add a column with the body mass index",
        "needs": ["df", "height_cm", "weight_kg"],
    },
    {
        "name": "labels: Norwegian customers among 80 countries",
        "hidden": PRELUDE
        + "_countries = ['Norway', 'Sweden', 'Peru'] + [f'Country {i}' for i in range(77)]\n"
        "cli = pd.DataFrame({'client': np.arange(6000), 'home_country': _rng.choice("
        "_countries, 6000), 'bal_eur': _rng.random(6000)})",
        "cells": ["cli.bal_eur.sum()"],
        "request": "total balance of the Norwegian clients",
        "needs": ["cli", "'home_country'", "'Norway'", "'bal_eur'"],
    },
    {
        "name": "synonym: price for a cost column among 40 tables",
        "hidden": PRELUDE
        + "for _i in range(40):\n    globals()[f'lookup_{_i}'] = pd.DataFrame({'key': [1], "
        "'val': [2]})\n"
        "catalog = pd.DataFrame({'item': ['a', 'b'], 'unit_cost': [2.5, 4.0]})\n"
        "for _i in range(40, 80):\n    globals()[f'lookup_{_i}'] = pd.DataFrame({'key': [1]})",
        "cells": ["lookup_3.shape"],
        "request": "average price of the items",
        "needs": ["catalog", "'unit_cost'"],
    },
    {
        "name": "wide: the target named by its meaning",
        "hidden": PRELUDE
        + "txns = pd.DataFrame(_rng.random((50, 3000)), columns=[f'v{i}' for i in range(3000)])"
        "\ntxns['is_fraud'] = _rng.random(50) < 0.1",
        "cells": ["txns.shape"],
        "request": "train a classifier that predicts the target from the other columns",
        "needs": ["txns", "'is_fraud'"],
    },
    # Written after the code was tuned on the ones above, and kept whatever they scored.
    {
        "name": "held out: hospital stays with ward codes",
        "hidden": PRELUDE
        + "stays = pd.DataFrame({'patient_ref': np.arange(9000), 'ward': _rng.choice(['ICU', "
        "'icu', 'Cardio', 'Maternity', 'Ortho'], 9000), 'los_days': np.where(_rng.random(9000) "
        "< 0.03, 999, _rng.integers(1, 30, 9000))})",
        "cells": ["stays.tail(0)"],
        "request": "average length of stay in intensive care",
        "needs": ["stays", "'ward'", "'ICU'", "'icu'", "'los_days'", "999"],
    },
    {
        "name": "held out: a dict of model results",
        "hidden": PRELUDE
        + "results = {m: {'rmse': float(_rng.random()), 'r2': float(_rng.random())} for m in "
        "['ridge', 'lasso', 'random_forest', 'xgboost']}\n"
        "for _i in range(30):\n    globals()[f'fold_{_i}'] = _rng.random(10)",
        "cells": ["fold_0.mean()"],
        "request": "which model has the lowest error?",
        "needs": ["results", "'rmse'", "'random_forest'"],
    },
    {
        "name": "held out: survey answers with free text and a likert scale",
        "hidden": PRELUDE
        + "answers = pd.DataFrame({'respondent': np.arange(1200), 'satisfaction': _rng.choice("
        "['Very satisfied', 'Satisfied', 'Neutral', 'Dissatisfied', 'very satisfied '], 1200), "
        "'comment': [f'comment number {i}' for i in range(1200)]})",
        "cells": ["answers.shape"],
        "request": "share of very satisfied respondents",
        "needs": ["answers", "'satisfaction'", "'Very satisfied'", "'very satisfied '"],
    },
    {
        "name": "held out: stock prices in a wide pivot",
        "hidden": PRELUDE + "_tickers = [f'T{i:03d}' for i in range(800)] + ['AAPL', 'MSFT']\n"
        "px = pd.DataFrame(_rng.random((250, 802)) * 100, columns=_tickers, "
        "index=pd.date_range('2024-01-01', periods=250, freq='D'))",
        "cells": ["px.shape"],
        "request": "plot Apple and Microsoft closing prices",
        "needs": ["px", "'AAPL'", "'MSFT'"],
    },
]
