# -*- coding: utf-8 -*-
GREETING = "héllo"
NAME = "wörld"
